import Foundation
import Testing
import ThumbcacheLMDB
import ThumbcacheStore
import ThumbcacheTestSupport

struct ThumbnailStoreTests {
    static let variant = ThumbnailVariant(kind: .thumbnail, generatorVersion: 3)

    static func header(width: UInt32 = 256, height: UInt32 = 170) -> ThumbnailHeader {
        ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: true, pixelWidth: width, pixelHeight: height,
                        scale: 2, created: 1_700_000_000_000_000_000, sourceContentType: "public.jpeg")
    }

    @Test func thumbnailRoundTripsAcrossReopen() throws {
        let dir = TemporaryDirectory()
        let content = ContentHash.of(Array("some image bytes".utf8))
        let key = ThumbnailKey(content: content, boxWidth: 256, boxHeight: 256, variant: Self.variant)
        let data = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        do {
            let store = try ThumbnailStore.open(directory: dir.path)
            try store.apply([.thumbnail(key, Self.header(), data: data)])
            #expect(try store.containsThumbnail(key))
        }
        // The store above is released, so this opens the environment anew from disk.
        let store = try ThumbnailStore.open(directory: dir.path)
        let record = try #require(try store.thumbnail(key))
        #expect(record.header == Self.header())
        #expect(record.data == data)
        #expect(record.header.pointSize.width == 128)
        let other = ThumbnailKey(content: content, boxWidth: 512, boxHeight: 512, variant: Self.variant)
        #expect(try store.thumbnail(other) == nil)
    }

    @Test func keysOfOneContentFormTheSizeLadder() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let a = ContentHash(high: 1, low: 1)
        let b = ContentHash(high: 1, low: 2)
        var writes: [StoreWrite] = []
        for box: UInt32 in [512, 64, 256] {
            writes.append(.thumbnail(ThumbnailKey(content: a, boxWidth: box, boxHeight: box, variant: Self.variant), Self.header(width: box), data: [1]))
        }
        writes.append(.thumbnail(ThumbnailKey(content: b, boxWidth: 128, boxHeight: 128, variant: Self.variant), Self.header(), data: [2]))
        try store.apply(writes)
        let ladder = try store.thumbnails(of: a).map(\.key.boxWidth)
        #expect(ladder == [64, 256, 512])
    }

    @Test func variantFingerprintRoundTrips() {
        for kind in RepresentationKind.allCases {
            let v = ThumbnailVariant(kind: kind, fit: .fill, color: .linearLight, generatorVersion: 0xDEAD_BEEF)
            #expect(ThumbnailVariant(fingerprint: v.fingerprint) == v)
        }
        let k = ThumbnailKey(content: ContentHash(high: 9, low: 8), boxWidth: 300, boxHeight: 200, variant: Self.variant)
        #expect(k.bytes.withUnsafeBytes { ThumbnailKey(bytes: $0) } == k)
    }

    @Test func aPreviewsKeyNamesItsPageWhereAThumbnailsHasFitAndColour() {
        // The thumbnail kinds' fingerprints are as FORMAT.md has them since format 1.
        #expect(ThumbnailVariant(kind: .thumbnail, fit: .fill, color: .linearLight, generatorVersion: 7).fingerprint == 0x0301_0100_0000_0007)
        #expect(ThumbnailVariant(kind: .lowQuality, generatorVersion: 1).fingerprint == 0x0200_0000_0000_0001)
        for page: UInt32 in [0, 1, 19, 70_000, ThumbnailVariant.pageLimit - 1] {
            let v = ThumbnailVariant(kind: .preview, generatorVersion: 3, page: page)
            #expect(v.fingerprint == 0x04 << 56 | UInt64(page) << 32 | 3)
            #expect(ThumbnailVariant(fingerprint: v.fingerprint) == v)
            let key = ThumbnailKey(content: ContentHash(high: 5, low: 6), boxWidth: 2048, boxHeight: 2048, variant: v)
            #expect(key.bytes.withUnsafeBytes { ThumbnailKey(bytes: $0) } == key)
        }
        // A preview is always fitted and gamma-encoded: its key has no room to say otherwise.
        let asked = ThumbnailVariant(kind: .preview, fit: .fill, color: .linearLight, generatorVersion: 3, page: 2)
        #expect(asked.fit == .fit && asked.color == .gammaEncoded)
    }

    @Test func aContentsPreviewsStayOutOfItsSizeLadder() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let a = ContentHash(high: 1, low: 1)
        let thumbnail = ThumbnailKey(content: a, boxWidth: 256, boxHeight: 256, variant: Self.variant)
        let previews = (0..<3).map {
            ThumbnailKey(content: a, boxWidth: 1024, boxHeight: 1024,
                         variant: ThumbnailVariant(kind: .preview, generatorVersion: Self.variant.generatorVersion, page: UInt32($0)))
        }
        try store.apply([.thumbnail(thumbnail, Self.header(width: 256), data: [1])] + previews.map { .thumbnail($0, Self.header(width: 1024), data: [2]) })
        let stored = try store.thumbnails(of: a)
        #expect(stored.map(\.key) == [thumbnail] + previews, "one content's records, pages in order after the thumbnail")
        #expect(stored.filter { $0.key.variant == Self.variant }.map(\.key) == [thumbnail])
        #expect(try store.thumbnail(previews[2])?.data == [2])
    }

    @Test func statCacheServesUnchangedFilesWithoutReading() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let path = try dir.write("photo.jpg", Array("first version".utf8))
        let hasher = ContentHasher()

        let first = try store.identify(fileAt: path, hasher: hasher)
        #expect(!first.fromCache)
        // Record as if hashed long after the file's last change, so the entry is trusted.
        let later = first.snapshot.changeTime + 10_000_000_000
        try store.apply([.file(path: path, snapshot: first.snapshot, content: first.content, now: later)])

        let second = try store.identify(fileAt: path, hasher: hasher)
        #expect(second.fromCache)
        #expect(second.content == first.content)

        // New bytes: the snapshot differs, so the file is read again and gets a new hash.
        try Data("second version!".utf8).write(to: URL(fileURLWithPath: path))
        let third = try store.identify(fileAt: path, hasher: hasher)
        #expect(!third.fromCache)
        #expect(third.content != first.content)
        #expect(third.content == ContentHash.of(Array("second version!".utf8)))
    }

    @Test func recentlyChangedFilesAreRecordedAsRacyAndReadAgain() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let path = try dir.write("fresh.png", [1, 2, 3])
        let id = try store.identify(fileAt: path, hasher: ContentHasher())
        try store.apply([.file(path: path, snapshot: id.snapshot, content: id.content)])
        #expect(try store.fileEntry(path: path)?.isRacy == true)
        #expect(try store.identify(fileAt: path, hasher: ContentHasher()).fromCache == false)
    }

    @Test func pathsLongerThanTheKeyLimitWork() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        var path = dir.path
        for i in 0..<6 { path += "/" + String(repeating: Character(String(i)), count: 100) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let long = path + "/image.png"
        let sibling = path + "/other.png"
        #expect(long.utf8.count > store.environment.maxKeySize)
        let content = ContentHash(high: 42, low: 42)
        let snapshot = FileSnapshot(device: 1, inode: 2, size: 3, modificationTime: 4, changeTime: 5, kind: .regular)
        try store.apply([.file(path: long, snapshot: snapshot, content: content, now: 10_000_000_000)])
        #expect(try store.cachedContentHash(path: long, snapshot: snapshot) == content)
        #expect(try store.cachedContentHash(path: sibling, snapshot: snapshot) == nil)
    }

    @Test func failuresAreRememberedPerGeneratorVersion() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let content = ContentHash(high: 5, low: 6)
        try store.apply([.failure(content: content, generatorVersion: 1, FailureRecord(reason: "truncated JPEG", created: 7))])
        #expect(try store.failure(content: content, generatorVersion: 1)?.reason == "truncated JPEG")
        #expect(try store.failure(content: content, generatorVersion: 2) == nil)
        try store.apply([.clearFailure(content: content, generatorVersion: 1)])
        #expect(try store.failure(content: content, generatorVersion: 1) == nil)
        try store.apply([.failure(content: content, generatorVersion: 1, FailureRecord(reason: "x", created: 7))])
        #expect(try store.clearAllFailures() == 1)
        #expect(try store.statistics().failures == 0)
    }

    /// Callers decide by the record's kind, never by its text: a reason that reads like "no
    /// picture" is still a rejection, and the kind survives the round trip.
    @Test func aFailureKeepsItsKindApartFromItsReason() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let kinds: [FailureRecord.Kind] = [.rejected, .noPicture, .tooLarge, .workerFailed]
        for (i, kind) in kinds.enumerated() {
            let content = ContentHash(high: 9, low: UInt64(i))
            try store.apply([.failure(content: content, generatorVersion: 1, FailureRecord(kind: kind, reason: "no picture to show: \(i)", created: 7))])
            let read = try #require(try store.failure(content: content, generatorVersion: 1))
            #expect(read.kind == kind && read.reason == "no picture to show: \(i)" && read.created == 7)
        }
    }

    @Test func unknownFormatVersionIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        // Stamp the environment as if a future thumbcache had written it.
        let meta = try store.environment.database("meta")
        try store.environment.write { txn in try txn.put(meta, key: Array("format".utf8), value: [99, 0, 0, 0]) }
        let error = #expect(throws: StoreError.self) { try ThumbnailStore.open(directory: dir.path) }
        guard case .unsupportedFormat(99, ThumbnailStore.formatVersion)? = error?.reason else {
            Issue.record("expected unsupportedFormat, got \(String(describing: error))")
            return
        }
        #expect(error?.path == dir.path)
        #expect(error?.description.contains("format version 99") == true)
    }

    @Test func anotherProgramsLMDBIsNotTouched() throws {
        let dir = TemporaryDirectory()
        let env = try Environment.open(directory: dir.path)
        _ = try env.database("someone-elses")
        #expect(throws: StoreError.self) { try ThumbnailStore.open(directory: dir.path) }
        #expect(try env.databaseNames() == ["someone-elses"])
    }

    @Test func statisticsCountRecordsAndBytes() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let icon = ThumbnailVariant(kind: .icon, generatorVersion: 1)
        try store.apply([
            .thumbnail(ThumbnailKey(content: .init(high: 1, low: 0), boxWidth: 64, boxHeight: 64, variant: Self.variant), Self.header(), data: [UInt8](repeating: 1, count: 1000)),
            .thumbnail(ThumbnailKey(content: .init(high: 2, low: 0), boxWidth: 64, boxHeight: 64, variant: icon), Self.header(), data: [1]),
            .file(path: "/x", snapshot: FileSnapshot(device: 1, inode: 1, size: 1, modificationTime: 1, changeTime: 1, kind: .regular), content: .init(high: 1, low: 0)),
        ])
        let s = try store.statistics()
        #expect(s.thumbnails == 2)
        #expect(s.thumbnailsByKind == ["thumbnail": 1, "icon": 1])
        #expect(s.thumbnailBytesByKind["thumbnail"]! > 1000 && s.thumbnailBytesByKind["icon"]! < 100)
        #expect(s.thumbnailBytesByKind.values.reduce(0, +) == s.thumbnailBytes)
        #expect(s.files == 1)
        #expect(s.thumbnailBytes > 1001)
        #expect(s.fileSize > 0 && s.usedBytes <= s.fileSize && s.mapSize >= s.usedBytes)
    }
}
