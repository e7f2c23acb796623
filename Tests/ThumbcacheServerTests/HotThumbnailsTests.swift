import Foundation
import NIOCore
import Testing
@testable import Thumbcache
@testable import ThumbcacheServer

/// The serving cache's bytes held in in-memory files: read back intact, and every descriptor
/// given back when its thumbnail leaves the cache.
struct HotThumbnailsTests {
    @Test func heldFilesAreReadBackAndClosedWhenEvicted() throws {
        // This cache's own files, told apart by device and inode: other tests in this process hold theirs.
        var inodes: Set<String> = []
        do {
            let hot = HotThumbnails(budget: 8 * (20_000 + HotThumbnails.Entry.overhead))
            var bodies: [ThumbnailKey: ByteBuffer] = [:]
            for i in 0..<20 {
                let bytes = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
                let key = ThumbnailSpec(size: 256, scale: 1).key(for: ContentHash(high: UInt64(i), low: 7))
                bodies[key] = ByteBuffer(bytes: bytes)
                let entry = HotThumbnails.Entry(body: ByteBuffer(bytes: bytes), contentType: "image/png", etag: "\"\(i)\"", checked: 0)
                if case .file(let file) = entry.payload { inodes.insert(Self.inode(file.descriptor)) }
                hot.insert(key, entry)
            }
            #expect(inodes.count == 20)
            // Only the newest eight fit the budget; each is a file, and their bytes come back.
            #expect(Self.openInodes(among: inodes) == 8)
            var kept = 0
            for (key, body) in bodies {
                guard let entry = hot.lookup(key)?.entry else { continue }
                kept += 1
                guard case .file = entry.payload else { Issue.record("a 20 KB thumbnail is held as a file"); continue }
                #expect(entry.body() == body)
            }
            #expect(kept == 8)
        }
        #expect(Self.openInodes(among: inodes) == 0)
    }

    /// The open file's device and inode, "" if it cannot be read.
    static func inode(_ fd: Int32) -> String {
        var info = stat()
        return fstat(fd, &info) == 0 ? identity(info) : ""
    }

    /// How many of `inodes` this process's descriptors still hold open.
    static func openInodes(among inodes: Set<String>) -> Int {
        let dir = "/proc/self/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { name in
            var info = stat()
            return stat(dir + "/" + name, &info) == 0 && inodes.contains(identity(info))
        }.count
    }

    private static func identity(_ info: stat) -> String { "\(info.st_dev):\(info.st_ino)" }

    /// A thumbnail URL's size and scale are FormFields' answer for every shape of query, errors
    /// included (its fields are split as bytes); and the Host check reads names without case.
    @Test func theQueryReadInPlaceAgreesWithFormFields() {
        func outcome(_ body: () throws(ServeError) -> (Int, Double)) -> String {
            do throws(ServeError) { return "\(try body())" } catch { return "\(error)" }
        }
        let hash = Substring(String(repeating: "ab", count: 16))
        let queries = ["size=256", "size=128&scale=2", "scale=2&size=64", "size=256&size=0", "size", "size=", "=5&size=32",
                       "a=1&&size=32&", "size=32&scale=nan", "size=9999", "size=%33%32", "size=3+2", "scale=1.5", "", "size=-1", "size=+64"]
        for query in queries {
            let inPlace = outcome { () throws(ServeError) in
                let (_, size, scale) = try ThumbnailEndpoints.parse(hash: hash, query: query[...])
                return (size, scale)
            }
            let decoded = outcome { () throws(ServeError) in try ThumbnailEndpoints.sizeAndScale(FormFields(query[...])) }
            #expect(inPlace == decoded, "\(query)")
        }
        #expect(AccessPolicy.hostName("LocalHost:8421") == "localhost" && AccessPolicy.hostName("[::1]:80") == "[::1]")
        #expect(AccessPolicy.hostName("127.0.0.1") == "127.0.0.1" && AccessPolicy.hostName("LOCALHOST") == "localhost")
    }

    /// The budget bounds memory: a buffer counts with its whole storage, and every entry with its
    /// own overhead (the serve soak's 64 MB budget held 120 MB of 9 KB thumbnails before).
    @Test func aThumbnailCostsItsBuffersStorage() {
        var roomy = ByteBufferAllocator().buffer(capacity: 16384)
        roomy.writeBytes([UInt8](repeating: 7, count: 9000))
        let entry = HotThumbnails.Entry(body: roomy, contentType: "image/png", etag: "\"r\"", checked: 0)
        #expect(entry.size == 16384 + HotThumbnails.Entry.overhead && entry.headers.first(name: "content-length") == "9000")
        let hot = HotThumbnails(budget: 8 * entry.size)
        for i in 0..<10 {
            hot.insert(ThumbnailSpec(size: 256, scale: 1).key(for: ContentHash(high: UInt64(i), low: 9)), entry)
        }
        let kept = (0..<10).filter { hot.lookup(ThumbnailSpec(size: 256, scale: 1).key(for: ContentHash(high: UInt64($0), low: 9))) != nil }
        #expect(kept == Array(2..<10))
    }

    @Test func smallThumbnailsStayBuffers() {
        let entry = HotThumbnails.Entry(body: ByteBuffer(bytes: [1, 2, 3]), contentType: "image/png", etag: "\"x\"", checked: 0)
        guard case .buffer(let buffer) = entry.payload else { Issue.record("a 3-byte thumbnail is not worth a file"); return }
        #expect(buffer.readableBytes == 3 && entry.headers.first(name: "content-length") == "3")
    }
}
