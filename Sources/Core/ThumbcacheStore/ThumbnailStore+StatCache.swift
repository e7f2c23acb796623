import Synchronization
import ThumbcacheSync
import ThumbcacheLMDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The stat cache: path → (device, inode, size, times) → content hash (Docs/FORMAT.md).
extension ThumbnailStore {
    /// The key of `path` in the `files` database: its UTF-8 bytes, or for a path longer than
    /// LMDB's key limit, a zero byte and the XXH3-128 of the path (the path then follows the value).
    ///
    /// Calls `body` with the key of `path` and, for a long path, its bytes; no allocation for
    /// ordinary paths (the key is a view of the string's own UTF-8 storage).
    func withFileKey<R>(_ path: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        var path = path
        return try path.withUTF8 { utf8 in
            let raw = UnsafeRawBufferPointer(utf8)
            if raw.count <= maxStatKeySize && raw.first != 0 { return try body(raw, nil) }
            return try withUnsafeTemporaryAllocation(byteCount: 17, alignment: 8) { key in
                key[0] = 0
                ContentHash.of(raw).write(to: UnsafeMutableRawBufferPointer(rebasing: key[1...]))
                return try body(UnsafeRawBufferPointer(key), raw)
            }
        }
    }

    /// The stat-cache entry for `path`, whatever its state.
    package func fileEntry(path: String) throws(StoreError) -> StatEntry? {
        return try reading("read stat cache") { h, txn in
            try withFileKey(path) { key, longPath in
            guard let value = try txn.get(h.files, key: key) else { return nil }
            guard let (entry, trailing) = StatEntry.decode(value) else {
                throw StoreError(path: directory, reason: .corruptRecord(database: Name.files, key: path))
            }
            if let longPath, !trailing.elementsEqual(longPath) { return nil }
            return entry
            }
        }
    }

    /// The content hash of `path` if the stat cache knows it and `snapshot` shows the file
    /// unchanged since; nil otherwise (unknown, changed, or recorded while racy).
    package func cachedContentHash(path: String, snapshot: FileSnapshot) throws(StoreError) -> ContentHash? {
        try cachedEntry(path: path, snapshot: snapshot)?.content
    }

    /// The stat-cache entry of `path` if `snapshot` shows the file unchanged since it was made.
    package func cachedEntry(path: String, snapshot: FileSnapshot) throws(StoreError) -> StatEntry? {
        guard let entry = try fileEntry(path: path), !entry.isRacy, entry.snapshot.sameContentAs(snapshot) else { return nil }
        return entry
    }

    /// Identifies the file at `path`: one `stat`, then the stat cache, and only on a miss a
    /// read of the whole file through `hasher`.
    ///
    /// - Returns: the hash, the snapshot it belongs to, and whether it came from the cache.
    ///   On a miss, record the result with ``StoreWrite/file(path:snapshot:content:type:now:)``.
    package func identify(fileAt path: String, hasher: ContentHasher) throws -> FileIdentity {
        try identify(fileAt: path, snapshot: FileSnapshot.of(path: path), hasher: hasher)
    }

    /// ``identify(fileAt:hasher:)`` for a caller that has just taken the file's `snapshot`.
    package func identify(fileAt path: String, snapshot: FileSnapshot, hasher: ContentHasher) throws -> FileIdentity {
        guard snapshot.kind == .regular else { throw FileError(path: path, reason: .notRegularFile(snapshot.kind)) }
        if let entry = try cachedEntry(path: path, snapshot: snapshot) {
            return FileIdentity(path: path, snapshot: snapshot, content: entry.content, fromCache: true, cachedType: entry.type,
                                cachedVouch: entry.vouch)
        }
        let (hash, hashed) = try hasher.hash(fileAt: path)
        return FileIdentity(path: path, snapshot: hashed, content: hash, fromCache: false)
    }

    /// How many times thumbnails were removed from the store (eviction, collection, repair):
    /// a ``StatVouch`` made at another count no longer holds. Read it before looking at what it
    /// vouches for, so that a removal in between makes the vouch stale, not wrong.
    package func removalCount() throws(StoreError) -> UInt64 {
        try reading("read the removal count") { h, txn in try Self.removalCount(h, txn) }
    }

    /// Moves the removal count on, in the transaction that removes thumbnails.
    func noteRemoval(_ h: Handles, _ txn: borrowing Transaction) throws {
        let next = try Self.removalCount(h, txn) &+ 1
        try txn.put(h.meta, key: Name.removalsKey, value: withUnsafeBytes(of: next.littleEndian) { Array($0) })
    }

    static func removalCount(_ h: Handles, _ txn: borrowing Transaction) throws -> UInt64 {
        try txn.get(h.meta, key: Name.removalsKey).map { $0.count == 8 ? UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) : 0 } ?? 0
    }
}
