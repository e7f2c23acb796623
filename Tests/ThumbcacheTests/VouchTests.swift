import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheLMDB
import ThumbcacheStore
import ThumbcacheTestSupport
@testable import Thumbcache

/// A warm writes into each stat entry what it found complete (every thumbnail of the plan
/// stored, the words indexed), so the next warm of the unchanged file looks neither up; any
/// removal of a thumbnail or of a text makes those vouches stale (Docs/FORMAT.md).
struct VouchTests {
    struct Tree {
        let dir = TemporaryDirectory()
        let photo: String
        let notes: String
        let store: ThumbnailStore
        var root: String { dir.appending("tree") }

        init() throws {
            try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
            photo = try dir.write("tree/photo.png", ImageEncoder.png(testPhoto(width: 90, height: 60)))
            notes = try dir.write("tree/notes.txt", Array("a note about elderberries\n".utf8))
            store = try ThumbnailStore.open(directory: dir.appending("cache"))
            // An entry recorded within 2 s of a change is not trusted, nor its vouch (FORMAT.md).
            RacyWindow.waitUntilSettled([dir.appending("tree")])
        }

        func warm(index: MetadataIndex?) async -> (WarmSummary, renders: Int) {
            let warmer = Warmer(store: store)
            let summary = await warmer.warm([root], options: .init(jobs: 1, index: index))
            return (summary, warmer.factory.renderCount)
        }

        func vouch(_ path: String) throws -> StatVouch? { try store.fileEntry(path: path)?.vouch }

        /// Whether the entry of `path` vouches for its words in `index`.
        func wordsVouched(_ path: String, in index: MetadataIndex) throws -> Bool {
            guard let words = try vouch(path)?.words, words != 0 else { return false }
            return try index.wordsStamps().valid.contains(words ^ IndexFeeder.catalogueStamp)
        }
    }

    @Test func aWarmVouchesForWhatItFoundComplete() async throws {
        let tree = try Tree()
        let index = try MetadataIndex.open(directory: tree.dir.appending("index"))
        let (first, made) = await tree.warm(index: index)
        #expect(first.generated == 2 && made == 2, "\(first)")
        let removals = try tree.store.removalCount()
        // The photo has no words to read; the note's, read now, are vouched for under the warm's
        // stamp, which became valid when they were all committed.
        #expect(try tree.vouch(tree.photo)?.removals == removals && tree.vouch(tree.notes)?.removals == removals)
        #expect(try tree.wordsVouched(tree.photo, in: index) && tree.wordsVouched(tree.notes, in: index))
        #expect(try index.hasText(content: tree.store.fileEntry(path: tree.notes)!.content.bytes))
        let entries = try [tree.photo, tree.notes].map { try tree.store.fileEntry(path: $0) }

        let (second, remade) = await tree.warm(index: index)
        #expect(second.alreadyCached == 2 && remade == 0, "\(second)")
        #expect(try [tree.photo, tree.notes].map { try tree.store.fileEntry(path: $0) } == entries, "nothing to write again")
        #expect(try index.wordsStamps().valid.count == 1, "a warm that vouched for nothing new confirms nothing")
    }

    /// Words read by a warm that did not finish (killed before its texts were committed) are
    /// vouched for under a stamp that never became valid: the next warm looks and reads them.
    @Test func wordsOfAWarmThatDidNotFinishAreReadAgain() async throws {
        let tree = try Tree()
        _ = await tree.warm(index: nil)  // thumbnails made and vouched for, no words yet
        let entry = try #require(try tree.store.fileEntry(path: tree.notes))
        var unconfirmed = try #require(entry.vouch)
        unconfirmed.words = 0x5EED ^ IndexFeeder.catalogueStamp  // a stamp no warm confirmed
        try tree.store.apply([.file(path: tree.notes, snapshot: entry.snapshot, content: entry.content, type: entry.type,
                                    vouch: unconfirmed, now: entry.snapshot.changeTime + 10_000_000_000)])
        let index = try MetadataIndex.open(directory: tree.dir.appending("index"))
        _ = await tree.warm(index: index)
        #expect(try index.hasText(content: entry.content.bytes))
        #expect(try tree.wordsVouched(tree.notes, in: index))
    }

    /// The warm trusts the vouch, so a thumbnail removed behind it would never be made again
    /// if the removal did not move the store's count on.
    @Test func aThumbnailEvictedAfterTheWarmIsMadeAgain() async throws {
        let tree = try Tree()
        _ = await tree.warm(index: nil)
        let content = try #require(try tree.store.fileEntry(path: tree.photo)?.content)
        #expect(try tree.store.thumbnails(of: content).count == 1)
        #expect(try tree.store.evict(toFit: 0).evictedThumbnails == 2)
        let (again, made) = await tree.warm(index: nil)
        #expect(again.generated == 2 && made == 2, "\(again)")
        #expect(try tree.store.thumbnails(of: content).count == 1)
        #expect(try tree.vouch(tree.photo)?.removals == tree.store.removalCount())
    }

    /// The same for a thumbnail `check --repair` removed.
    @Test func aThumbnailARepairRemovedIsMadeAgain() async throws {
        let tree = try Tree()
        _ = await tree.warm(index: nil)
        let content = try #require(try tree.store.fileEntry(path: tree.photo)?.content)
        let stored = try #require(try tree.store.thumbnails(of: content).first)
        try tree.store.apply([.thumbnail(stored.key, stored.header, data: [1, 2, 3, 4])])  // not the PNG it says
        #expect(try tree.store.repair(tree.store.check()) == 1)
        let (again, made) = await tree.warm(index: nil)
        #expect(again.generated == 1 && made == 1, "\(again)")
        #expect(try tree.store.thumbnail(stored.key) != nil)
    }

    /// A vouch for words is for one index: another (or the same made again) has another stamp,
    /// and gets the words read into it.
    @Test func anotherIndexGetsTheWordsReadIntoIt() async throws {
        let tree = try Tree()
        let first = try MetadataIndex.open(directory: tree.dir.appending("index"))
        _ = await tree.warm(index: first)
        #expect(try tree.wordsVouched(tree.notes, in: first))
        let other = try MetadataIndex.open(directory: tree.dir.appending("other-index"))
        #expect(try !tree.wordsVouched(tree.notes, in: other))
        _ = await tree.warm(index: other)
        let content = try #require(try tree.store.fileEntry(path: tree.notes)?.content)
        #expect(try other.hasText(content: content.bytes))
        #expect(try tree.wordsVouched(tree.notes, in: other))
    }

    /// A file that changes is hashed again: its new entry starts without the old one's vouch.
    @Test func aChangedFileIsLookedAtAgain() async throws {
        let tree = try Tree()
        _ = await tree.warm(index: nil)
        try Data(ImageEncoder.png(testPhoto(width: 70, height: 50))).write(to: URL(fileURLWithPath: tree.photo))
        RacyWindow.waitUntilSettled([tree.photo])
        let (again, made) = await tree.warm(index: nil)
        #expect(again.generated == 1 && again.alreadyCached == 1 && made == 1, "\(again)")
    }

    /// `check` holds each vouch to the store: a thumbnail removed without the count moving on
    /// (a bug, or a cache put back from an older copy) leaves a vouch a re-warm would trust for
    /// ever. The check names the entry; its repair has the file read again, and made again.
    @Test func checkFindsAVouchTheStoreDoesNotHold() async throws {
        let tree = try Tree()
        let blob = try tree.dir.write("tree/blob.bin", (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        RacyWindow.waitUntilSettled([blob])
        _ = await tree.warm(index: nil)
        #expect(try tree.vouch(blob)?.specs == StatVouch.SpecStamp().value, "a type without thumbnails is vouched for, with nothing to find")
        #expect(try tree.store.check().findings.isEmpty)

        let content = try #require(try tree.store.fileEntry(path: tree.photo)?.content)
        let stored = try #require(try tree.store.thumbnails(of: content).first)
        let environment = tree.store.environment
        let thumbnails = try environment.database("thumbnails", create: false)
        try environment.write { txn in _ = try txn.delete(thumbnails, key: stored.key.bytes) }  // the count not moved on
        let report = try tree.store.check()
        #expect(report.findings.map(\.problem) == ["vouches for thumbnails of its content, none of which is stored"], "\(report.findings)")
        #expect(report.findings.first?.record == tree.photo)

        #expect(try tree.store.repair(report) == 1)
        #expect(try tree.store.check().findings.isEmpty)
        let (again, made) = await tree.warm(index: nil)
        #expect(again.generated == 1 && made == 1, "\(again)")
        #expect(try tree.store.thumbnail(stored.key) != nil)

        // A vouch made at a count the store never reached (a copy of the files put over an older store).
        let entry = try #require(try tree.store.fileEntry(path: tree.notes))
        var ahead = try #require(entry.vouch)
        ahead.removals += 3
        try tree.store.apply([.file(path: tree.notes, snapshot: entry.snapshot, content: entry.content, type: entry.type, vouch: ahead,
                                    now: entry.snapshot.changeTime + 10_000_000_000)])
        let past = try tree.store.check().findings.map(\.problem)
        #expect(past == ["vouches at removal \(ahead.removals), past the store's \(ahead.removals - 3)"], "\(past)")
    }

    /// A vouch for words is held to the index: words the index lost without its stamps going
    /// (the texts' record removed behind them) are a violation for the file whose type has words,
    /// not for the photo vouched beside it; the repair removes the entry and the next warm reads
    /// the words again.
    @Test func checkFindsAVouchForWordsTheIndexDoesNotHold() async throws {
        let tree = try Tree()
        let index = try MetadataIndex.open(directory: tree.dir.appending("index"))
        _ = await tree.warm(index: index)
        let types = ContentTypeRegistry()
        #expect(try tree.store.check(heldTo: index, types: types).findings.isEmpty)
        #expect(try tree.wordsVouched(tree.photo, in: index) && tree.wordsVouched(tree.notes, in: index))

        let content = try #require(try tree.store.fileEntry(path: tree.notes)?.content)
        let texts = try index.environment.database("texts", create: false)
        try index.environment.write { txn in _ = try txn.delete(texts, key: [0x68] + content.bytes.prefix(16)) }  // no stamp forgotten
        #expect(try !index.hasText(content: content.bytes))
        let report = try tree.store.check(heldTo: index, types: types)
        #expect(report.findings.map(\.problem) == ["vouches for its content's words, which the index does not hold"], "\(report.findings)")
        #expect(report.findings.first?.record == tree.notes)
        #expect(try tree.store.check().findings.isEmpty, "the store alone holds nothing against it")

        #expect(try tree.store.repair(report) == 1)
        #expect(try tree.store.check(heldTo: index, types: types).findings.isEmpty)
        _ = await tree.warm(index: index)
        #expect(try index.hasText(content: content.bytes), "read again")
        #expect(try tree.store.check(heldTo: index, types: types).findings.isEmpty)
    }
}
