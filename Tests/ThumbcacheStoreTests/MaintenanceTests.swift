import Foundation
import Testing
import ThumbcacheStore
import ThumbcacheTestSupport

struct MaintenanceTests {
    static let variant = ThumbnailVariant(generatorVersion: 1)

    static func header(createdMinute: Int64) -> ThumbnailHeader {
        ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: false, pixelWidth: 10, pixelHeight: 10, scale: 1,
                        created: createdMinute * 60_000_000_000, sourceContentType: "public.png")
    }

    /// Records `path` (its real snapshot and hash) with a thumbnail of `size` bytes.
    static func record(_ path: String, in store: ThumbnailStore, size: Int = 1000, minute: Int64 = 1) throws -> ThumbnailKey {
        let (hash, snapshot) = try ContentHasher().hash(fileAt: path)
        let key = ThumbnailKey(content: hash, boxWidth: 256, boxHeight: 256, variant: variant)
        try store.apply([
            .file(path: path, snapshot: snapshot, content: hash, now: snapshot.changeTime + 10_000_000_000),
            .thumbnail(key, header(createdMinute: minute), data: [UInt8](repeating: 7, count: size)),
        ])
        return key
    }

    @Test func garbageCollectionRemovesExactlyTheOrphans() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let gone = try dir.write("gone.png", Array("gone".utf8))
        let changed = try dir.write("changed.png", Array("before".utf8))
        let kept = try dir.write("kept.png", Array("kept".utf8))
        let twin = try dir.write("twin.png", Array("kept".utf8))  // same bytes as kept
        let goneKey = try Self.record(gone, in: store)
        let changedKey = try Self.record(changed, in: store)
        let keptKey = try Self.record(kept, in: store)
        _ = try Self.record(twin, in: store)
        let nobody = ThumbnailKey(content: ContentHash(high: 9, low: 9), boxWidth: 64, boxHeight: 64, variant: Self.variant)
        try store.apply([
            .thumbnail(nobody, Self.header(createdMinute: 1), data: [1, 2, 3]),
            .failure(content: nobody.content, generatorVersion: 1, FailureRecord(reason: "x", created: 0)),
            .failure(content: keptKey.content, generatorVersion: 1, FailureRecord(reason: "y", created: 0)),
        ])
        try FileManager.default.removeItem(atPath: gone)
        try Data("after, longer".utf8).write(to: URL(fileURLWithPath: changed))

        let preview = try store.collectGarbage(dryRun: true)
        #expect(preview.staleFiles == 2 && preview.orphanedThumbnails == 3 && preview.orphanedFailures == 1)
        #expect(try store.statistics().thumbnails == 4)  // nothing changed (twin shares kept's thumbnail)
        #expect(try store.removalCount() == 0)

        let report = try store.collectGarbage()
        // A warm's vouch that a file's thumbnails are stored rests on this count.
        #expect(try store.removalCount() == 1, "one transaction removed thumbnails")
        #expect(report.staleFiles == 2 && report.orphanedThumbnails == 3 && report.orphanedFailures == 1)
        #expect(try !store.containsThumbnail(goneKey) && !store.containsThumbnail(changedKey) && !store.containsThumbnail(nobody))
        #expect(try store.containsThumbnail(keptKey))
        let after = try store.statistics()
        #expect(after.files == 2 && after.thumbnails == 1 && after.failures == 1)
    }

    @Test func garbageCollectionCanBeLimitedToRoots() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        try FileManager.default.createDirectory(atPath: dir.appending("a"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.appending("b"), withIntermediateDirectories: true)
        let inA = try dir.write("a/x.png", Array("a".utf8))
        let inB = try dir.write("b/y.png", Array("b".utf8))
        _ = try Self.record(inA, in: store)
        _ = try Self.record(inB, in: store)
        try FileManager.default.removeItem(atPath: inA)
        try FileManager.default.removeItem(atPath: inB)
        let report = try store.collectGarbage(roots: [dir.appending("a")])
        #expect(report.staleFiles == 1 && report.orphanedThumbnails == 1)
        #expect(try store.fileEntry(path: inB) != nil)
    }

    @Test func evictionRemovesLeastRecentlyUsedFirst() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        var keys: [ThumbnailKey] = []
        for i in 0..<5 {
            let key = ThumbnailKey(content: ContentHash(high: UInt64(i), low: 0), boxWidth: 256, boxHeight: 256, variant: Self.variant)
            try store.apply([.thumbnail(key, Self.header(createdMinute: Int64(10 + i)), data: [UInt8](repeating: 1, count: 1000))])
            keys.append(key)
        }
        // The oldest was used recently: it is kept.
        try store.apply([.accessed(keys[0], minute: 100)])
        let total = try store.thumbnailBytes()
        let budget = total * 3 / 5 + 10  // room for three
        let preview = try store.evict(toFit: budget, dryRun: true)
        #expect(preview.evictedThumbnails == 2)
        #expect(try store.statistics().thumbnails == 5)
        #expect(try store.removalCount() == 0)
        let report = try store.evict(toFit: budget)
        #expect(try store.removalCount() == 1)
        #expect(report.evictedThumbnails == 2)
        #expect(try store.containsThumbnail(keys[0]))
        #expect(try !store.containsThumbnail(keys[1]) && !store.containsThumbnail(keys[2]))
        #expect(try store.containsThumbnail(keys[3]) && store.containsThumbnail(keys[4]))
        #expect(try store.thumbnailBytes() <= budget)
        #expect(try store.evict(toFit: budget).evictedThumbnails == 0)
        #expect(try store.removalCount() == 1, "removing nothing moves nothing")
    }

    @Test func previewsAreEvictedBeforeAnyThumbnail() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        // Two old thumbnails, then two previews used since: the previews still go first.
        let thumbnails = (0..<2).map { ThumbnailKey(content: ContentHash(high: UInt64($0), low: 0), boxWidth: 256, boxHeight: 256, variant: Self.variant) }
        let previews = (0..<2).map {
            ThumbnailKey(content: ContentHash(high: UInt64($0), low: 0), boxWidth: 2048, boxHeight: 2048,
                         variant: ThumbnailVariant(kind: .preview, generatorVersion: 1, page: UInt32($0)))
        }
        for (i, key) in thumbnails.enumerated() {
            try store.apply([.thumbnail(key, Self.header(createdMinute: Int64(10 + i)), data: [UInt8](repeating: 1, count: 1000))])
        }
        for (i, key) in previews.enumerated() {
            try store.apply([.thumbnail(key, Self.header(createdMinute: Int64(50 + i)), data: [UInt8](repeating: 2, count: 3000)),
                             .accessed(key, minute: UInt32(100 + i))])
        }
        // Room for both thumbnails and one preview: the preview used longer ago goes.
        let one = try store.evict(toFit: 2000 + 3000 + 500)
        #expect(one.evictedThumbnails == 1)
        #expect(try !store.containsThumbnail(previews[0]) && store.containsThumbnail(previews[1]))
        // Room for less than the thumbnails: the other preview goes before the older thumbnail.
        let more = try store.evict(toFit: 1500)
        #expect(more.evictedThumbnails == 2)
        #expect(try !store.containsThumbnail(previews[1]) && !store.containsThumbnail(thumbnails[0]) && store.containsThumbnail(thumbnails[1]))
    }
}
