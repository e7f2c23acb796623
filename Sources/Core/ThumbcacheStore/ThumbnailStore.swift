import Synchronization
import ThumbcacheSync
import ThumbcacheLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The content-addressed thumbnail store: one LMDB environment in a directory.
///
/// Thumbnails are keyed by the hash of the source file's bytes, so two paths with the same
/// bytes share one thumbnail and a changed file can never be served a stale one. A stat cache
/// maps each path to its last snapshot and hash, so an unchanged file is never read twice.
///
/// Reads are zero-copy inside their closures and never wait for writers, in this process or
/// another. Writes are batches applied in one transaction (see `apply(_:)`), usually through
/// a `GroupCommitWriter`.
public final class ThumbnailStore: Sendable {
    /// The on-disk format this code reads and writes (see Docs/FORMAT.md).
    package static let formatVersion: UInt32 = 1

    /// The cache directory (the environment is in it, or in its current generation).
    public let directory: String
    let options: Environment.Options
    /// How this store's users key files (``ContentHasher/Keying``): a hasher for it is ``hasher()``.
    package let keying: ContentHasher.Keying
    private let state: Mutex<Handles>
    /// The handles this store opened with, and whether they were ever replaced: until a
    /// compaction switches generations (most processes never see one), reads take these without
    /// the mutex.
    private let initial: Handles
    private let switched = Atomic<Bool>(false)
    /// When the generation was last compared with the directory's (coarse monotonic ns).
    private let lastCheck = Atomic<UInt64>(0)
    let maxStatKeySize: Int

    /// The environment in use and its databases; replaced whole when a compaction switches
    /// generations. A class, so that taking it on every read is one retain, not a dozen.
    final class Handles: Sendable {
        let environment: Environment
        let meta: Database
        let files: Database
        let thumbnails: Database
        let failures: Database
        let access: Database
        /// Thumbnails waiting to go to a remote tier: key → the attributes to send with it.
        let uploads: Database
        let generation: Int

        init(environment: Environment, meta: Database, files: Database, thumbnails: Database, failures: Database,
             access: Database, uploads: Database, generation: Int) {
            self.environment = environment
            self.meta = meta
            self.files = files
            self.thumbnails = thumbnails
            self.failures = failures
            self.access = access
            self.uploads = uploads
            self.generation = generation
        }
    }

    /// How often readers look for a switched generation. Meanwhile they read the old one, which
    /// stays consistent (its file lives on while mapped).
    static let generationCheckInterval: UInt64 = 100_000_000

    /// The environment in use now.
    package var environment: Environment { handles().environment }

    enum Name {
        static let meta = "meta"
        static let files = "files"
        static let thumbnails = "thumbnails"
        static let failures = "failures"
        static let access = "access"
        static let uploads = "uploads"
        static let formatKey = Array("format".utf8)
        /// How many transactions removed thumbnails (u64; absent: none), for ``StatVouch``.
        static let removalsKey = Array("removals".utf8)
    }

    /// Opens the store in `directory`, creating it (mode 0700, files 0600) if needed.
    ///
    /// - Throws: ``StoreError`` with ``StoreError/Reason/unsupportedFormat(found:supported:)`` for a
    ///   cache of another format version, ``StoreError/Reason/notAStore`` for another program's LMDB files.
    public static func open(directory: some FileLocation, options: Options = Options()) throws(StoreError) -> ThumbnailStore {
        try ThumbnailStore(directory: directory.fileSystemPath, options: options.environment, keying: options.keying)
    }

    /// A hasher that keys files as this store's options say (one per thread).
    package func hasher() -> ContentHasher { ContentHasher(keying: keying) }

    /// Whether a cache exists in `directory` (in the directory itself or, after a compaction,
    /// in the generation it names), without creating one.
    package static func exists(directory: String) -> Bool { CacheLocation.holdsCache(directory) }

    /// The default cache directory: `$THUMBCACHE_DIR`, else `$XDG_CACHE_HOME/thumbcache`,
    /// else `~/.cache/thumbcache`.
    public static var defaultDirectory: String { CacheLocation.standard }

    private init(directory: String, options: Environment.Options, keying: ContentHasher.Keying) throws(StoreError) {
        self.directory = directory
        self.options = options
        self.keying = keying
        let h = try Self.openCurrentGeneration(directory: directory, options: options)
        maxStatKeySize = h.environment.maxKeySize
        initial = h
        state = Mutex(h)
    }

    /// Opens the generation `current` names, and checks afterwards that it still does: a
    /// compaction may have switched (and deleted the old generation) in between.
    static func openCurrentGeneration(directory: String, options: Environment.Options) throws(StoreError) -> Handles {
        var attempt = 0
        while true {
            attempt += 1
            let generation = Generation.current(in: directory)
            let env: Environment
            do {
                env = try Environment.open(directory: Generation.path(generation, in: directory), options: options)
            } catch {
                if attempt < 5 && Generation.current(in: directory) != generation { continue }
                throw .wrapping(error, path: directory, operation: "open environment")
            }
            if Generation.current(in: directory) != generation && attempt < 5 { continue }
            let d = try openDatabases(env)
            return Handles(environment: env, meta: d.meta, files: d.files, thumbnails: d.thumbnails, failures: d.failures, access: d.access,
                           uploads: d.uploads, generation: generation)
        }
    }

    /// The handles to use now; at most every 100 ms, compares the generation with the
    /// directory's and reopens if a compaction switched it.
    func handles(forceCheck: Bool = false) -> Handles {
        let h = switched.load(ordering: .acquiring) ? state.withLock { $0 } : initial
        let now = MonotonicClock.coarseNanoseconds()
        guard forceCheck || now &- lastCheck.load(ordering: .relaxed) >= Self.generationCheckInterval else { return h }
        lastCheck.store(now, ordering: .relaxed)
        if Generation.current(in: directory) == h.generation { return h }
        return (try? refresh(from: h.generation)) ?? h
    }

    /// Reopens at the directory's current generation, unless another thread already did.
    @discardableResult
    func refresh(from stale: Int) throws(StoreError) -> Handles {
        let current = state.withLock { $0 }
        if current.generation != stale { return current }
        let fresh = try Self.openCurrentGeneration(directory: directory, options: options)
        state.withLock { $0 = fresh }
        switched.store(true, ordering: .releasing)
        return fresh
    }

    /// Checks the format version (refusing other formats and other programs' environments
    /// before creating anything), then opens the databases.
    private static func openDatabases(_ env: Environment) throws(StoreError)
        -> (meta: Database, files: Database, thumbnails: Database, failures: Database, access: Database, uploads: Database)
    {
        let path = env.directory
        func wrap<R>(_ operation: String, _ body: () throws -> R) throws(StoreError) -> R {
            do {
                return try body()
            } catch {
                throw .wrapping(error, path: path, operation: operation)
            }
        }
        let names = try wrap("list databases") { try env.databaseNames() }
        if !names.isEmpty && !names.contains(Name.meta) { throw StoreError(path: path, reason: .notAStore) }
        let meta = try wrap("open database 'meta'") { try env.database(Name.meta) }
        func storedVersion() throws(StoreError) -> UInt32? {
            try wrap("read format version") {
                try env.read { txn in try txn.get(meta, key: Name.formatKey).map(Self.decodeVersion) }
            }
        }
        switch try storedVersion() {
        case Self.formatVersion?: break
        case let found?: throw StoreError(path: path, reason: .unsupportedFormat(found: found, supported: Self.formatVersion))
        case nil:
            try wrap("write format version") {
                try env.write { txn in
                    if try txn.get(meta, key: Name.formatKey) == nil {
                        try txn.put(meta, key: Name.formatKey, value: Self.encodeVersion(Self.formatVersion))
                    }
                }
            }
            // Another process may have written a different version first.
            if let now = try storedVersion(), now != Self.formatVersion {
                throw StoreError(path: path, reason: .unsupportedFormat(found: now, supported: Self.formatVersion))
            }
        }
        let files = try wrap("open database 'files'") { try env.database(Name.files) }
        let thumbnails = try wrap("open database 'thumbnails'") { try env.database(Name.thumbnails) }
        let failures = try wrap("open database 'failures'") { try env.database(Name.failures) }
        let access = try wrap("open database 'access'") { try env.database(Name.access) }
        // Added after format 1 was fixed: an older cache gains it empty, and older code ignores it.
        let uploads = try wrap("open database 'uploads'") { try env.database(Name.uploads) }
        return (meta, files, thumbnails, failures, access, uploads)
    }

    static func encodeVersion(_ version: UInt32) -> [UInt8] {
        withUnsafeBytes(of: version.littleEndian) { Array($0) }
    }

    private static func decodeVersion(_ v: UnsafeRawBufferPointer) -> UInt32 {
        v.count == 4 ? UInt32(littleEndian: v.loadUnaligned(as: UInt32.self)) : UInt32.max
    }

    /// Runs `body` in a read transaction, turning LMDB errors into ``StoreError``.
    func reading<R>(_ operation: String, _ body: (Handles, borrowing Transaction) throws -> R) throws(StoreError) -> R {
        let h = handles()
        do {
            return try h.environment.read { txn in try body(h, txn) }
        } catch {
            throw .wrapping(error, path: directory, operation: operation)
        }
    }

    // MARK: Thumbnails

    /// Calls `body` with the stored thumbnail viewed in place, or returns nil if there is none.
    package func withThumbnail<R>(_ key: ThumbnailKey, _ body: (ThumbnailRecordView) throws -> R) throws -> R? {
        return try reading("read thumbnail") { h, txn in
            guard let value = try key.withEncoded({ try txn.get(h.thumbnails, key: $0) }) else { return nil }
            guard let (header, data) = ThumbnailHeader.decode(value) else {
                throw StoreError(path: directory, reason: .corruptRecord(database: Name.thumbnails, key: key.description))
            }
            return try body(ThumbnailRecordView(header: header, data: data))
        }
    }

    /// The stored thumbnail, copied out, or nil.
    package func thumbnail(_ key: ThumbnailKey) throws -> ThumbnailRecord? {
        try withThumbnail(key) { $0.copy() }
    }

    /// True if a thumbnail is stored under `key`.
    package func containsThumbnail(_ key: ThumbnailKey) throws(StoreError) -> Bool {
        return try reading("read thumbnail") { h, txn in try key.withEncoded { try txn.contains(h.thumbnails, key: $0) } }
    }

    /// The cache-hit path in one read transaction: the stat cache entry of `path` (which must
    /// match `snapshot`), then the thumbnail of that content for `box` and `variant`, viewed in place.
    /// Returns nil on any miss.
    package func withCachedThumbnail<R>(
        path: String, snapshot: FileSnapshot, boxWidth: UInt32, boxHeight: UInt32, variant: ThumbnailVariant,
        _ body: (ContentHash, ThumbnailRecordView) throws -> R
    ) throws -> R? {
        return try reading("read cached thumbnail") { h, txn in
            let found = try withFileKey(path) { key, longPath -> StatEntry? in
                guard let value = try txn.get(h.files, key: key), let (entry, trailing) = StatEntry.decode(value),
                    longPath.map({ trailing.elementsEqual($0) }) ?? true
                else { return nil }
                return entry
            }
            guard let entry = found, !entry.isRacy, entry.snapshot.sameContentAs(snapshot) else { return nil }
            let key = ThumbnailKey(content: entry.content, boxWidth: boxWidth, boxHeight: boxHeight, variant: variant)
            guard let thumb = try key.withEncoded({ try txn.get(h.thumbnails, key: $0) }),
                let (header, data) = ThumbnailHeader.decode(thumb)
            else { return nil }
            return try body(entry.content, ThumbnailRecordView(header: header, data: data))
        }
    }

    /// The minute (since 1970) `key`'s thumbnail was last recorded as served, if ever.
    package func lastAccess(of key: ThumbnailKey) throws(StoreError) -> UInt32? {
        try reading("read access stamp") { h, txn in
            try key.withEncoded { k in
                try txn.get(h.access, key: k).flatMap { value in
                    value.count == 4 ? UInt32(littleEndian: value.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }) : nil
                }
            }
        }
    }

    /// Every thumbnail stored for `content`, ordered by box size: the size ladder.
    package func thumbnails(of content: ContentHash) throws(StoreError) -> [(key: ThumbnailKey, header: ThumbnailHeader)] {
        let prefix = content.bytes
        return try reading("list thumbnails") { h, txn in
            var found: [(ThumbnailKey, ThumbnailHeader)] = []
            try prefix.withUnsafeBytes { start in
                try txn.forEach(h.thumbnails, from: start) { key, value in
                    guard key.starts(with: prefix) else { return false }
                    if let k = ThumbnailKey(bytes: key), let (h, _) = ThumbnailHeader.decode(value) { found.append((k, h)) }
                    return true
                }
            }
            return found
        }
    }

    /// Visits every stored thumbnail in key order, viewed in place, until `body` returns false.
    /// - Returns: how many were visited.
    @discardableResult
    package func forEachThumbnail(_ body: (ThumbnailKey, ThumbnailRecordView) throws -> Bool) throws -> Int {
        try reading("list thumbnails") { h, txn in
            var visited = 0
            try txn.forEach(h.thumbnails) { key, value in
                guard let k = ThumbnailKey(bytes: key), let (header, data) = ThumbnailHeader.decode(value) else {
                    throw StoreError(path: directory, reason: .corruptRecord(database: Name.thumbnails, key: Array(key).description))
                }
                visited += 1
                return try body(k, ThumbnailRecordView(header: header, data: data))
            }
            return visited
        }
    }

    // MARK: Failures

    /// The recorded failure for `content` under `generatorVersion`, if any.
    package func failure(content: ContentHash, generatorVersion: UInt32) throws(StoreError) -> FailureRecord? {
        let key = FailureRecord.key(content: content, generatorVersion: generatorVersion)
        return try reading("read failure") { h, txn in
            try txn.get(h.failures, key: key).flatMap(FailureRecord.decode)
        }
    }

    /// Forgets every recorded failure, so that all are tried again. Returns how many there were.
    @discardableResult
    package func clearAllFailures() throws(StoreError) -> Int {
        try writing("clear failures") { h, txn in
            let n = try txn.count(h.failures)
            try txn.removeAll(h.failures)
            return n
        }
    }
}

/// A write found its generation replaced by a compaction.
struct StaleGeneration: Error {}

/// A file identified by content.
package struct FileIdentity: Sendable, Hashable {
    package var path: String
    package var snapshot: FileSnapshot
    package var content: ContentHash
    /// True if the hash came from the stat cache, without reading the file.
    package var fromCache: Bool
    /// The content type the stat cache keeps for the file, if any (only when ``fromCache``).
    package var cachedType: CachedContentType?
    /// What the stat cache's entry vouches for (only when ``fromCache``).
    package var cachedVouch: StatVouch?

    package init(path: String, snapshot: FileSnapshot, content: ContentHash, fromCache: Bool, cachedType: CachedContentType? = nil,
                 cachedVouch: StatVouch? = nil) {
        self.path = path
        self.snapshot = snapshot
        self.content = content
        self.fromCache = fromCache
        self.cachedType = cachedType
        self.cachedVouch = cachedVouch
    }
}
