import ThumbcacheLMDB

#if canImport(Glibc)
import Glibc
#endif

/// What garbage collection and eviction found or did.
public struct MaintenanceReport: Sendable, Hashable, Codable {
    /// Stat-cache entries dropped: the file is gone, changed, or not a regular file any more.
    public var staleFiles: Int = 0
    /// Thumbnails removed because no live path has their content.
    public var orphanedThumbnails: Int = 0
    /// Failure records removed with them.
    public var orphanedFailures: Int = 0
    /// Thumbnails removed, least recently used first, to fit the byte budget.
    public var evictedThumbnails: Int = 0
    /// Bytes of thumbnail values removed (orphaned and evicted).
    public var bytesRemoved: Int = 0
    /// True if nothing was changed (a dry run).
    public var dryRun: Bool = false
}

/// Minutes since 1970: the granularity of access stamps.
package func currentMinute() -> UInt32 {
    UInt32(clamping: StoreClock.nowNanoseconds() / 60_000_000_000)
}

extension ThumbnailStore {
    /// Removes what no live path needs: stat entries of files that are gone or changed (only
    /// under `roots`, if given), then thumbnails, failures and access stamps whose content no
    /// remaining entry references (anywhere).
    public func collectGarbage(roots: [String]? = nil, dryRun: Bool = false) throws(StoreError) -> MaintenanceReport {
        var report = MaintenanceReport(dryRun: dryRun)
        let prefixes = roots?.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        // 1. Which paths are stale, and which contents are still referenced.
        let (stale, live) = try reading("scan stat cache") { h, txn -> ([[UInt8]], Set<ContentHash>) in
            var stale: [[UInt8]] = []
            var live: Set<ContentHash> = []
            try txn.forEach(h.files) { key, value in
                guard let (entry, trailing) = StatEntry.decode(value) else {
                    stale.append(Array(key))
                    return true
                }
                let path = key.first == 0 ? String(decoding: trailing, as: UTF8.self) : String(decoding: key, as: UTF8.self)
                let inScope = prefixes.map { ps in ps.contains { path.hasPrefix($0) || path + "/" == $0 } } ?? true
                if inScope, !Self.stillThere(path, entry.snapshot) {
                    stale.append(Array(key))
                } else {
                    live.insert(entry.content)
                }
                return true
            }
            return (stale, live)
        }
        report.staleFiles = stale.count
        // 2. Orphans: keys whose content is not live.
        let (orphanKeys, orphanBytes, failureKeys) = try reading("scan thumbnails") { h, txn -> ([[UInt8]], Int, [[UInt8]]) in
            var keys: [[UInt8]] = []
            var bytes = 0
            var failed: [[UInt8]] = []
            try txn.forEach(h.thumbnails) { key, value in
                if let content = ContentHash(bytes: key), !live.contains(content) {
                    keys.append(Array(key))
                    bytes += value.count
                }
                return true
            }
            try txn.forEach(h.failures) { key, _ in
                if let content = ContentHash(bytes: key), !live.contains(content) { failed.append(Array(key)) }
                return true
            }
            return (keys, bytes, failed)
        }
        report.orphanedThumbnails = orphanKeys.count
        report.orphanedFailures = failureKeys.count
        report.bytesRemoved = orphanBytes
        guard !dryRun else { return report }
        try deleteInBatches(stale, from: \.files)
        try deleteInBatches(orphanKeys, from: \.thumbnails, alsoFrom: \.access)
        try deleteInBatches(failureKeys, from: \.failures)
        return report
    }

    /// Removes least recently used thumbnails until their bytes fit `budget`: previews first (a
    /// preview is large and made again in a moment), then the rest. Recency is the later of the
    /// thumbnail's creation and its last recorded access (minute granularity).
    public func evict(toFit budget: Int, dryRun: Bool = false) throws(StoreError) -> MaintenanceReport {
        var report = MaintenanceReport(dryRun: dryRun)
        let (victims, bytes) = try reading("scan for eviction") { h, txn -> ([[UInt8]], Int) in
            var entries: [(key: [UInt8], minute: UInt32, bytes: Int)] = []
            var total = 0
            try txn.forEach(h.thumbnails) { key, value in
                let created = ThumbnailHeader.decode(value).map { UInt32(clamping: $0.0.created / 60_000_000_000) } ?? 0
                let used = try txn.get(h.access, key: key).flatMap { v -> UInt32? in
                    v.count == 4 ? UInt32(littleEndian: v.loadUnaligned(as: UInt32.self)) : nil
                } ?? 0
                entries.append((Array(key), max(created, used), value.count))
                total += value.count
                return true
            }
            guard total > budget else { return ([], 0) }
            // Previews, then oldest first; ties broken by key for a stable order.
            let previewByte = 24  // the fingerprint's first byte: the representation kind
            func isPreview(_ key: [UInt8]) -> Bool { key.count > previewByte && key[previewByte] == RepresentationKind.preview.rawValue }
            entries.sort { a, b in
                let (pa, pb) = (isPreview(a.key), isPreview(b.key))
                if pa != pb { return pa }
                return a.minute != b.minute ? a.minute < b.minute : a.key.lexicographicallyPrecedes(b.key)
            }
            var victims: [[UInt8]] = []
            var removed = 0
            for e in entries where total - removed > budget {
                victims.append(e.key)
                removed += e.bytes
            }
            return (victims, removed)
        }
        report.evictedThumbnails = victims.count
        report.bytesRemoved = bytes
        if !dryRun { try deleteInBatches(victims, from: \.thumbnails, alsoFrom: \.access) }
        return report
    }

    /// Total bytes of stored thumbnail values.
    package func thumbnailBytes() throws(StoreError) -> Int {
        try reading("sum thumbnails") { h, txn in
            var total = 0
            try txn.forEach(h.thumbnails) { _, value in
                total += value.count
                return true
            }
            return total
        }
    }

    private static func stillThere(_ path: String, _ snapshot: FileSnapshot) -> Bool {
        guard let now = try? FileSnapshot.of(path: path), now.kind == .regular else { return false }
        return now.sameContentAs(snapshot)
    }

    /// Deletes keys in transactions of at most 4096, so a large collection never makes one
    /// huge transaction (LMDB slows down sharply with those).
    private func deleteInBatches(
        _ keys: [[UInt8]], from database: KeyPath<Handles, Database>, alsoFrom other: KeyPath<Handles, Database>? = nil
    ) throws(StoreError) {
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 4096, keys.count)]
            try writing("delete \(chunk.count) records") { h, txn in
                var removed = false
                for key in chunk {
                    if try txn.delete(h[keyPath: database], key: key) { removed = true }
                    if let other { try txn.delete(h[keyPath: other], key: key) }
                }
                if removed && database == \Handles.thumbnails { try noteRemoval(h, txn) }
            }
            start += chunk.count
        }
    }
}
