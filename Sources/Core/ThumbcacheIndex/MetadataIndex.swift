import CThumbcacheXXHash
import Glibc
import ThumbcacheLMDB

/// A Spotlight-like metadata index in an LMDB environment: items (files and app items) with
/// typed attributes, and the structures that answer queries (Docs/QUERY.md, Docs/FORMAT.md).
///
/// Databases: `meta` (version, counters, app attribute numbers, client states), `items`
/// (number → record), `ids` (identifier or path → number), `postings` (see `Postings`),
/// `links` (contentURL path → app items), `domains`, `expiry`, `hashes` (content → files),
/// `texts` and `words` (the words inside files: MetadataIndex+FullText.swift).
/// Many processes may read and write one index; each change is one LMDB transaction.
public final class MetadataIndex: Sendable {
    /// The directory holding the index's `data.mdb`.
    public let directory: String
    package let environment: Environment
    let meta: Database
    let items: Database
    let ids: Database
    let postings: Database
    let links: Database
    let domains: Database
    let expiry: Database
    let hashes: Database
    /// Full text: documents by content and their postings (MetadataIndex+FullText.swift).
    let texts: Database
    let words: Database
    /// Empty but while a compaction rewrites `words` through it.
    let wordsScratch: Database
    let catalog = AttributeCatalog()

    /// How commits reach the disk.
    public enum Durability: Sendable, Hashable {
        /// Every commit is flushed before it returns: survives power loss (app items need this).
        case everyCommit
        /// Commits reach the OS at once and the disk on ``sync()``: for bulk indexing from files,
        /// which a later warm can redo.
        case deferred
    }

    /// The on-disk format this code reads and writes (older ones are upgraded on opening).
    package static let formatVersion = 4
    static let versionKey = Array("version".utf8)
    static let nextItemKey = Array("next-item".utf8)
    static let wordsStampsKey = Array("words-stamps".utf8)
    static let wordsRemovalsKey = Array("words-removals".utf8)
    static let clientStatePrefix = Array("state:".utf8)

    /// Opens (creating if needed) the index in `directory`. An index of an older format is
    /// upgraded first (Docs/FORMAT.md, "Versions"), which takes seconds per million items.
    /// - Parameters:
    ///   - directory: where the index lives (created, mode 0700, if missing).
    ///   - durability: `.deferred` for bulk indexing (``sync()`` at the end).
    ///   - upgrading: called with the version found and the current one before an upgrade
    ///     begins, so a caller can say why opening takes a while.
    public static func open(directory: some FileLocation, durability: Durability = .everyCommit,
                            upgrading: (_ from: Int, _ to: Int) -> Void = { _, _ in }) throws(IndexError) -> MetadataIndex {
        let directory = directory.fileSystemPath
        do {
            // The map is address space, not memory or disk: 1 GiB spares growing (which re-runs
            // the transaction that hit the end) below about a million items.
            let env = try Environment.open(directory: directory, options: .init(mapSize: 1 << 30, maxDatabases: 12, durability: durability == .deferred ? .deferred : .everyCommit))
            return try MetadataIndex(environment: env, upgrading: upgrading)
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    private init(environment env: Environment, upgrading: (Int, Int) -> Void) throws {
        directory = env.directory
        environment = env
        meta = try env.database("meta")
        items = try env.database("items")
        ids = try env.database("ids")
        postings = try env.database("postings")
        links = try env.database("links")
        domains = try env.database("domains")
        expiry = try env.database("expiry")
        hashes = try env.database("hashes")
        texts = try env.database("texts")
        words = try env.database("words")
        wordsScratch = try env.database("words-compacting")
        let found: Int? = try env.read { txn in
            try txn.get(meta, key: Self.versionKey).map { Int($0.first ?? 0) }
        }
        if let found, found != Self.formatVersion {
            guard Self.upgradableVersions.contains(found) else {
                throw IndexError(path: env.directory, reason: .formatVersion(found: found, supported: Self.formatVersion))
            }
            upgrading(found, Self.formatVersion)
            try env.write { txn in try upgrade(txn) }
        }
        if found == nil {
            try env.write { txn in
                if try txn.get(meta, key: Self.versionKey) == nil {
                    try txn.put(meta, key: Self.versionKey, value: [UInt8(Self.formatVersion)])
                }
            }
        }
        try env.read { txn in try catalog.reload(txn, meta: meta) }
    }

    /// Flushes commits made with `.deferred` durability.
    public func sync() throws(IndexError) {
        do { try environment.sync() } catch { throw IndexError.wrapping(error, path: directory) }
    }

    // MARK: Reading items

    func record(_ itemNumber: UInt32, _ txn: borrowing Transaction) throws -> ItemRecord? {
        try txn.get(items, key: Self.itemNumberBytes(itemNumber)).flatMap { ItemRecord($0) }
    }

    /// The record's header, read in place (valid in `txn`): no attribute decoded.
    func recordView(_ itemNumber: UInt32, _ txn: borrowing Transaction) throws -> RecordView? {
        try txn.get(items, key: Self.itemNumberBytes(itemNumber)).flatMap(RecordView.init)
    }

    func lookup(_ ns: Namespace, _ identifier: String, _ txn: borrowing Transaction) throws -> UInt32? {
        try verified(txn.get(ids, key: Self.idKey(ns, identifier)), identifier, txn)
    }

    /// The item number in an `ids` value found under `identifier`'s key, if it is that identifier's.
    func verified(_ value: UnsafeRawBufferPointer?, _ identifier: String, _ txn: borrowing Transaction) throws -> UInt32? {
        guard let itemNumber = value.flatMap(Self.itemNumber) else { return nil }
        // A long identifier's key is a hash: make sure the record names this one.
        if identifier.utf8.count > Self.maxPlainKeyBytes, try record(itemNumber, txn)?.identifier != identifier { return nil }
        return itemNumber
    }

    /// App items whose contentURL is `path`.
    func linkedApps(_ path: String, _ txn: borrowing Transaction) throws -> [UInt32] {
        let prefix = Self.textKey(path) + [0]
        var itemNumbers: [UInt32] = []
        try prefix.withUnsafeBytes { start in
            try txn.forEach(links, from: start) { key, _ in
                guard key.count == prefix.count + 4, key.starts(with: prefix) else { return false }
                itemNumbers.append(Postings.readBE(key, at: prefix.count))
                return true
            }
        }
        return itemNumbers
    }

    func universe(_ txn: borrowing Transaction) throws -> Int {
        Int(try txn.get(meta, key: Self.nextItemKey).map { Postings.readBE($0, at: 0) } ?? 1)
    }

    /// Attribute names for numbers, reloading the catalog if another process added some.
    func attributeNames(_ attributes: [UInt16: AttributeValue], _ txn: borrowing Transaction) throws -> [String: AttributeValue] {
        if attributes.keys.contains(where: { catalog.info(id: $0) == nil }) { try catalog.reload(txn, meta: meta) }
        var out: [String: AttributeValue] = [:]
        for (id, value) in attributes {
            if let info = catalog.info(id: id) { out[info.name] = value }
        }
        return out
    }

    /// The result for the record `view`; its attributes are decoded only if some are `wanted`
    /// (nil: all of them).
    func result(_ itemNumber: UInt32, _ view: RecordView, attributes wanted: [String]?, _ txn: borrowing Transaction) throws -> SearchResult {
        var attributes: [String: AttributeValue] = [:]
        if wanted?.isEmpty != true, let record = ItemRecord(view.bytes) {
            var all = try attributeNames(record.effectiveAttributes, txn)
            if record.kind == .file { all[MDItem.path] = .string(record.identifier) }
            attributes = wanted.map { names in all.filter { names.contains($0.key) } } ?? all
        }
        var identifier: String? = view.kind == .app ? view.identifierString : nil
        var domain = view.domain.map { String(decoding: $0, as: UTF8.self) }
        if view.kind == .file, view.hasOverlay, let first = try linkedApps(view.identifierString, txn).first,
           let app = try self.record(first, txn) {
            identifier = app.identifier
            domain = app.domain
        }
        return SearchResult(itemNumber: itemNumber, path: view.path, identifier: identifier, domainIdentifier: domain,
                            contentHash: view.contentHash.map(Array.init), attributes: attributes)
    }

    /// Every attribute of the file at `path` as a query sees it (its own and those of app items
    /// describing it), like `mdls`; nil if the file is not indexed.
    public func item(path: String) throws(IndexError) -> SearchResult? { try item(.file, path) }

    /// The app item `identifier`, with its own attributes.
    public func item(identifier: String) throws(IndexError) -> SearchResult? { try item(.app, identifier) }

    private func item(_ ns: Namespace, _ key: String) throws(IndexError) -> SearchResult? {
        do {
            return try environment.read { txn in
                guard let itemNumber = try lookup(ns, key, txn), let view = try recordView(itemNumber, txn) else { return nil }
                return try result(itemNumber, view, attributes: nil, txn)
            }
        } catch { throw IndexError.wrapping(error, path: directory) }
    }

    /// The paths of indexed files whose content hash is `hash` (16 bytes), at most `limit`: who
    /// may be shown a thumbnail known only by its content.
    package func paths(withContent hash: [UInt8], limit: Int = 64) throws(IndexError) -> [String] {
        guard hash.count == 16 else { return [] }
        do {
            return try environment.read { txn in
                var numbers: [UInt32] = []
                try hash.withUnsafeBytes { start in
                    try txn.forEach(hashes, from: start) { key, _ in
                        guard key.count == 20, key.starts(with: hash), numbers.count < limit else { return false }
                        numbers.append(Postings.readBE(key, at: 16))
                        return true
                    }
                }
                return try numbers.compactMap { n in try record(n, txn).flatMap { $0.kind == .file ? $0.identifier : nil } }
            }
        } catch { throw IndexError.wrapping(error, path: directory) }
    }

    /// The state of the file indexed at `path`, to skip unchanged files cheaply (reads the
    /// record's header only: this runs for every file of every warm).
    package func indexedState(path: String) throws(IndexError) -> IndexedFileState? {
        do {
            return try environment.read { txn in
                guard let itemNumber = try lookup(.file, path, txn) else { return nil }
                return try recordView(itemNumber, txn)?.fileState
            }
        } catch { throw IndexError.wrapping(error, path: directory) }
    }

    /// ``indexedState(path:)`` for many paths in one read transaction, with each file's item
    /// number: what a warm asks of every file it walks, a batch at a time.
    package func indexedStates(paths: [String]) throws(IndexError) -> [(item: UInt32, state: IndexedFileState?)?] {
        do {
            return try environment.read { txn in
                try paths.map { path in
                    guard let itemNumber = try lookup(.file, path, txn) else { return nil }
                    return (itemNumber, try recordView(itemNumber, txn)?.fileState)
                }
            }
        } catch { throw IndexError.wrapping(error, path: directory) }
    }

    /// The client state saved with the last batch of `client`, after a crash too.
    public func clientState(client: String = "") throws(IndexError) -> [UInt8]? {
        do {
            return try environment.read { txn in
                try txn.get(meta, key: Self.clientStatePrefix + Array(client.utf8)).map { Array($0) }
            }
        } catch { throw IndexError.wrapping(error, path: directory) }
    }

    /// Sizes: items, and bytes per database.
    public func statistics() throws(IndexError) -> IndexStatistics {
        do {
            return try environment.read { txn in
                var s = IndexStatistics()
                for (name, db) in [("items", items), ("ids", ids), ("postings", postings), ("links", links),
                                   ("domains", domains), ("expiry", expiry), ("hashes", hashes), ("meta", meta), ("texts", texts), ("words", words)] {
                    let st = try txn.statistics(db)
                    s.databaseBytes[name] = st.pages * st.pageSize
                    if name == "items" { s.items = st.entries }
                    if name == "postings" { s.postingChunks = st.entries }
                }
                s.fileBytes = environment.info().usedBytes
                s.fileSystemFreeBytes = environment.fileSystemFreeBytes
                return s
            }
        } catch { throw IndexError.wrapping(error, path: directory) }
    }
}

/// What an index holds.
public struct IndexStatistics: Sendable, Hashable, Codable {
    public var items = 0
    package var postingChunks = 0
    /// Pages in use per database, in bytes.
    public var databaseBytes: [String: Int] = [:]
    /// Bytes of the data file in use (up to the last page written).
    public var fileBytes = 0
    /// Bytes still free on the file system holding the index, if known.
    public var fileSystemFreeBytes: Int?
    /// True if the file system holding the index has too little room left for a commit.
    public var fileSystemIsFull: Bool { fileSystemFreeBytes.map { $0 < Environment.fullFileSystemBytes } ?? false }
    /// The search structures only (postings), per item.
    package var indexBytesPerItem: Double { items == 0 ? 0 : Double(databaseBytes["postings"] ?? 0) / Double(items) }
}
