import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheIndex

/// Batches with client state, written by a real process that is killed at random moments.
@Suite(.serialized)
struct IndexProcessTests {
    @Test func clientStateTellsWhichBatchesLandedAfterAKill() throws {
        let dir = TemporaryDirectory()
        let path = dir.appending("index")
        var next = 0
        var random = SeededRandom.forTest()
        for round in 0..<6 {
            let child = try ChildProcess(program: "thumbcache-probe", arguments: ["index-batches", path, "\(next)"])
            _ = child.waitForLines(1 + round % 3, timeout: 60)  // at least one batch committed
            usleep(UInt32.random(in: 0..<40_000, using: &random))
            child.kill(SIGKILL)
            let (termination, stderr) = child.wait()
            #expect(termination == .signaled(SIGKILL), "probe ended early: \(stderr)")

            let index = try MetadataIndex.open(directory: path)
            let state = try #require(try index.clientState(client: "probe"))
            let last = try #require(Int(String(decoding: state, as: UTF8.self)))
            #expect(last >= next, "round \(round): client state \(last) is behind batch \(next)")
            // Every item of every batch up to the state is there; nothing of the batch after it.
            let results = try index.search("batch >= 0", options: SearchOptions(attributes: ["batch"]))
            #expect(results.count == 40 * (last + 1), "round \(round): \(results.count) items for batches 0…\(last)")
            #expect(try index.search("batch == \(last + 1)").count == 0)
            #expect(try index.search("batch == \(last)").count == 40)
            next = last + 1
        }
    }
}
