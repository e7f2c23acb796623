import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheIndex
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
    }

    @Test func aWarmVouchesForWhatItFoundComplete() async throws {
        let tree = try Tree()
        let index = try MetadataIndex.open(directory: tree.dir.appending("index"))
        let (first, made) = await tree.warm(index: index)
        #expect(first.generated == 2 && made == 2, "\(first)")
        let removals = try tree.store.removalCount()
        let words = try index.wordsStamp()
        // The photo has no words to read; the note's are read now and indexed after its entry
        // is written, so only the next warm, which finds them, vouches for them.
        #expect(try tree.vouch(tree.photo).map { $0.removals == removals && $0.words == words } == true)
        #expect(try tree.vouch(tree.notes).map { $0.removals == removals && $0.words == 0 } == true)
        #expect(try index.hasText(content: tree.store.fileEntry(path: tree.notes)!.content.bytes))

        let (second, remade) = await tree.warm(index: index)
        #expect(second.alreadyCached == 2 && remade == 0, "\(second)")
        #expect(try tree.vouch(tree.notes)?.words == words)
        let (third, _) = await tree.warm(index: index)
        #expect(third.alreadyCached == 2, "\(third)")
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
        _ = await tree.warm(index: first)
        #expect(try tree.vouch(tree.notes)?.words == first.wordsStamp())
        let other = try MetadataIndex.open(directory: tree.dir.appending("other-index"))
        #expect(try other.wordsStamp() != first.wordsStamp())
        _ = await tree.warm(index: other)
        let content = try #require(try tree.store.fileEntry(path: tree.notes)?.content)
        #expect(try other.hasText(content: content.bytes))
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
}
