import Foundation
import Testing
@testable import ThumbcacheStore
import ThumbcacheTestSupport

/// The stat cache's record: version 2 keeps the detected type and what a warm vouches for;
/// version 1 (no type) still reads.
struct StatEntryTests {
    static let snapshot = FileSnapshot(device: 7, inode: 42, size: 1234, modificationTime: 1_700_000_000_000_000_000,
                                       changeTime: 1_700_000_000_500_000_000, kind: .regular)
    static let content = ContentHash(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)

    @Test(arguments: [nil, CachedContentType(identifier: "org.freedesktop.mime.image.x-xpixmap", registryStamp: 0xDEAD_BEEF)],
          [nil, StatVouch(removals: 3, specs: 0x1234_5678, words: 0x8000_0000_0000_0001)])
    func roundTrips(type: CachedContentType?, vouch: StatVouch?) throws {
        let entry = StatEntry(snapshot: Self.snapshot, content: Self.content, isRacy: true, type: type, vouch: vouch)
        let longPath = Array(("/" + String(repeating: "long/", count: 120) + "file.png").utf8)
        for path in [nil, longPath] {
            let bytes = entry.encoded(longPath: path)
            let (decoded, trailing) = try #require(bytes.withUnsafeBytes { raw in StatEntry.decode(raw).map { ($0.0, Array($0.1)) } })
            // A vouch is kept only with a type: it is for the type's plan.
            #expect(decoded == StatEntry(snapshot: Self.snapshot, content: Self.content, isRacy: true, type: type, vouch: type == nil ? nil : vouch))
            #expect(trailing == (path ?? []))
        }
    }

    /// A reader from before the vouch reads a short path's entry as it did: the vouch follows
    /// everything it reads, and the flag bit it sets is one that reader ignores.
    @Test func anOlderReaderSeesTheSameEntry() throws {
        let type = CachedContentType(identifier: "public.png", registryStamp: 5)
        let plain = StatEntry(snapshot: Self.snapshot, content: Self.content, isRacy: false, type: type).encoded(longPath: nil)
        let vouched = StatEntry(snapshot: Self.snapshot, content: Self.content, isRacy: false, type: type,
                                vouch: StatVouch(removals: 1, specs: 2, words: 3)).encoded(longPath: nil)
        #expect(vouched.count == plain.count + StatVouch.encodedSize)
        #expect(Array(vouched.prefix(plain.count)) == zip(plain.indices, plain).map { $0 == 1 ? $1 | 2 : $1 })
    }

    @Test func aVersionOneRecordReadsWithoutAType() throws {
        var v1 = StatEntry(snapshot: Self.snapshot, content: Self.content, isRacy: false).encoded(longPath: nil)
        v1[0] = 1
        v1.remove(at: 58)  // version 1 has no type length byte
        #expect(v1.count == 58)
        let (decoded, _) = try #require(v1.withUnsafeBytes { raw in StatEntry.decode(raw).map { ($0.0, Array($0.1)) } })
        #expect(decoded.content == Self.content && decoded.snapshot.inode == 42 && decoded.type == nil)
    }

    @Test func aTypeIsKeptByTheStoreAndGivenBackByIdentify() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("a.dat", [1, 2, 3])
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let snapshot = try FileSnapshot.of(path: file)
        let type = CachedContentType(identifier: "public.data", registryStamp: 9)
        // Recorded as if long ago, so the entry is not racy.
        try store.apply([.file(path: file, snapshot: snapshot, content: Self.content, type: type, now: snapshot.changeTime + 10_000_000_000)])
        let id = try store.identify(fileAt: file, hasher: store.hasher())
        #expect(id.fromCache && id.content == Self.content && id.cachedType == type)
    }
}
