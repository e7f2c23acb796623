import Testing
@testable import Thumbcache

struct TallyTests {
    /// A file whose records fail to commit is counted once, as failed, not twice.
    @Test func aFailedCommitMovesTheFileToFailed() {
        let tally = Tally()
        tally.record(.generated)
        tally.record(.alreadyCached)
        tally.reclassify(.generated, asFailed: "/a.png", reason: "commit failed")
        tally.record(.failed("/b.png", "corrupt"))
        tally.reclassify(.failed("/b.png", "corrupt"), asFailed: "/b.png", reason: "commit failed")
        let s = tally.summary(elapsed: 0)
        #expect(s.seen == 3)
        #expect(s.generated == 0 && s.alreadyCached == 1)
        #expect(s.failures == ["commit failed": ["/a.png"], "corrupt": ["/b.png"]])
    }
}
