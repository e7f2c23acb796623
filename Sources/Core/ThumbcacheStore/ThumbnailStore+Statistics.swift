#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Counts and sizes of a store.
public struct StoreStatistics: Sendable, Hashable, Codable {
    public var directory: String
    public var formatVersion: UInt32
    /// Thumbnails stored, all kinds.
    public var thumbnails: Int
    /// Thumbnails by representation kind ("icon", "low-quality", "thumbnail", "preview").
    public var thumbnailsByKind: [String: Int]
    /// Bytes of stored thumbnail values (headers and encoded images).
    public var thumbnailBytes: Int
    /// Those bytes by representation kind: what previews take of a budget, say.
    public var thumbnailBytesByKind: [String: Int]
    /// Paths in the stat cache.
    public var files: Int
    /// Recorded generation failures.
    public var failures: Int
    /// Thumbnails queued for upload to a remote tier.
    public var uploadsQueued: Int
    /// Current map size: how far the file may grow before the map is enlarged.
    public var mapSize: Int
    /// Size of `data.mdb` on disk.
    public var fileSize: Int
    /// Bytes of the file up to its last used page.
    public var usedBytes: Int
    public var pageSize: Int
    /// Pages inside the file that are free for reuse.
    public var freePages: Int
}

extension ThumbnailStore {
    /// Counts every record (a cursor pass over keys; values' sizes come from their headers,
    /// so thumbnail bytes are not read).
    public func statistics() throws(StoreError) -> StoreStatistics {
        let (thumbs, byKind, bytes, bytesByKind, fileCount, failureCount, queued) = try reading("count records") { h, txn in
            var count = 0
            var bytes = 0
            var byKind: [String: Int] = [:]
            var bytesByKind: [String: Int] = [:]
            try txn.forEach(h.thumbnails) { key, value in
                count += 1
                bytes += value.count
                let kind = ThumbnailKey(bytes: key)?.variant.kind.description ?? "unknown"
                byKind[kind, default: 0] += 1
                bytesByKind[kind, default: 0] += value.count
                return true
            }
            return (count, byKind, bytes, bytesByKind, try txn.count(h.files), try txn.count(h.failures), try txn.count(h.uploads))
        }
        let env = handles().environment
        let free: Int
        do { free = try env.freePageCount() } catch { free = 0 }
        let info = env.info()
        var s = stat()
        let fileSize = stat(env.directory + "/data.mdb", &s) == 0 ? Int(s.st_size) : 0
        return StoreStatistics(
            directory: directory, formatVersion: Self.formatVersion, thumbnails: thumbs, thumbnailsByKind: byKind,
            thumbnailBytes: bytes, thumbnailBytesByKind: bytesByKind, files: fileCount, failures: failureCount, uploadsQueued: queued, mapSize: info.mapSize, fileSize: fileSize,
            usedBytes: info.usedBytes, pageSize: info.pageSize, freePages: free)
    }
}
