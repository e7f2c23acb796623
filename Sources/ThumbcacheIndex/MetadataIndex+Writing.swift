import Glibc
import ThumbcacheLMDB
import ThumbcacheSync

/// A posting list's key prefix, hashed by its bytes in one call.
struct TermKey: Hashable {
    var bytes: [UInt8]
    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}

/// What one write transaction has changed so far: posting edits, applied per list at the end,
/// so a batch touches each list's chunks once.
struct WriteSession {
    var postings = PostingAccumulator()
    var pendingAttributes: [String: AttributeInfo] = [:]
    var nextDoc: UInt32
    let firstNewDoc: UInt32
    /// No app item points at a file (checked once per transaction): new files need no link lookup.
    var linksEmpty: Bool?
    /// `hashes` keys to add (true) or remove, applied in key order at the end of a file batch.
    var hashEdits: [(key: [UInt8], add: Bool)] = []

    init(nextDoc: UInt32) {
        self.nextDoc = max(1, nextDoc)
        firstNewDoc = self.nextDoc
    }

    mutating func allocate() -> UInt32 {
        defer { nextDoc += 1 }
        return nextDoc
    }

    /// Adds the lists of a new item nothing links to (nothing to take away).
    mutating func add(_ doc: UInt32, _ r: ItemRecord, _ index: MetadataIndex) {
        var sink = AccumulatorSink(postings: postings, doc: doc)
        postings = PostingAccumulator()
        index.forEachTerm(r, pendingAttributes, &sink)
        postings = sink.postings
    }

    mutating func record(_ doc: UInt32, before: Set<TermKey>, after: Set<TermKey>) {
        for t in after where !before.contains(t) { t.bytes.withUnsafeBytes { postings.add($0, doc) } }
        for t in before where !after.contains(t) { t.bytes.withUnsafeBytes { postings.remove($0, doc) } }
    }
}

extension MetadataIndex {
    // MARK: Public writes

    /// Adds or replaces app items (by unique identifier).
    public func index(_ items: [SearchableItem]) throws(IndexError) {
        var batch = IndexBatch()
        batch.index(items)
        try perform(batch)
    }

    public func deleteItems(identifiers: [String]) throws(IndexError) {
        var batch = IndexBatch()
        batch.deleteItems(identifiers: identifiers)
        try perform(batch)
    }

    /// Deletes the app items of these domains and their subdomains.
    public func deleteItems(domains: [String]) throws(IndexError) {
        var batch = IndexBatch()
        batch.deleteItems(domains: domains)
        try perform(batch)
    }

    public func deleteAllAppItems() throws(IndexError) {
        var batch = IndexBatch()
        batch.deleteAllAppItems()
        try perform(batch)
    }

    /// Applies `batch` and stores `clientState` for `client` in the same transaction: after a
    /// crash, ``clientState(client:)`` tells exactly which batches landed.
    public func perform(_ batch: IndexBatch, clientState: [UInt8]? = nil, client: String = "") throws(IndexError) {
        try write { txn, s in
            for op in batch.operations {
                switch op {
                case .index(let list): for item in list { try indexApp(item, txn, &s) }
                case .deleteIdentifiers(let list):
                    for id in list { if let doc = try lookup(.app, id, txn) { try deleteApp(doc, txn, &s) } }
                case .deleteDomains(let list):
                    for domain in list { for doc in try appsInDomain(domain, txn) { try deleteApp(doc, txn, &s) } }
                case .deleteAllAppItems:
                    for doc in try allAppItems(txn) { try deleteApp(doc, txn, &s) }
                }
            }
            if let clientState {
                try txn.put(meta, key: Self.clientStatePrefix + Array(client.utf8), value: clientState)
            }
        }
    }

    /// Deletes app items whose expiration date is before `now` (seconds since 1970); returns how many.
    @discardableResult
    public func sweepExpired(now: Double) throws(IndexError) -> Int {
        try write { txn, s in
            var docs: [UInt32] = []
            let limit = NumericKey.key(now)
            try txn.forEach(expiry) { key, _ in
                guard key.count == 12 else { return true }
                let k = UInt64(Postings.readBE(key, at: 0)) << 32 | UInt64(Postings.readBE(key, at: 4))
                guard k < limit else { return false }
                docs.append(Postings.readBE(key, at: 8))
                return true
            }
            for doc in docs { try deleteApp(doc, txn, &s) }
            return docs.count
        }
    }

    /// Adds or updates files, recognising renamed ones by content (see ``FileIndexOutcome``).
    ///
    /// New files — most of a bulk load — are found in one pass over `ids` in path order and
    /// their records and lists built by ``NewFileBuild`` (on two threads for large batches); the
    /// rest (updates, renames, a path given twice, files apps describe) go one at a time after.
    public func indexFiles(_ files: [FileItem]) throws(IndexError) -> [FileIndexOutcome] {
        try write { txn, s in
            // Large batches look up known contents on a helper (a read transaction begun now sees
            // what this one does) while this thread orders the paths and numbers attributes.
            let known = files.count < NewFileBuild.minimumBatch ? nil : HelperWork { [self] in
                try environment.read { reader in try knownHashes(files, reader) }
            }
            // In path order: neighbouring paths share `ids` pages, which the cursor keeps at hand.
            // Through a buffer: `map` and `for … in` copy each item out (three retains).
            let keys = files.withUnsafeBufferPointer { f in f.indices.map { Self.idKey(.file, f[$0].path) } }
            let order = files.indices.sorted { ByteString.less(keys[$0], keys[$1]) || ($0 < $1 && keys[$0] == keys[$1]) }
            let table: AttributeTable
            do { table = try attributeTable(files, txn, &s) } catch { _ = try? known?.result(); throw error }
            let knownContent = try known?.result() ?? knownHashes(files, txn)
            var outcomes = [FileIndexOutcome](repeating: .unchanged, count: files.count)
            let build = NewFileBuild(files: files, table: table)
            let pass = Result { () throws -> [Int] in
                try findNewFiles(files, keys, order, knownContent, build, &outcomes, txn, &s)
            }
            let (groups, postings) = build.finish()
            let rest = try pass.get()
            // Only new files (a bulk load): their lists are final, so a helper starts grouping and
            // planning them while this thread writes records and hashes. Else after the rest's edits.
            let early = rest.isEmpty && postings.listCount >= Self.parallelApplyLists ? PostingApplication(postings, self, early: true) : nil
            defer { early?.cancel() }
            if early == nil { s.postings = postings }
            try txn.withCursor(items) { c in
                for g in groups {
                    try g.forEachRecord { doc, record in
                        try withUnsafeBytes(of: doc.bigEndian) { key in
                            try c.put(key, record, append: true)  // new numbers come after every item
                        }
                    }
                }
            }
            // After the new files' records: a path given twice updates the record just added.
            try txn.withCursor(ids) { idc in
                for i in rest { outcomes[i] = try upsertFile(files[i], table, idKey: keys[i], txn, &s, idc) }
            }
            // Content hashes in key order, through one cursor.
            try txn.withCursor(hashes) { c in
                // On the hashes' first eight bytes (random: almost never equal), then in the order made.
                let heads = s.hashEdits.map { ByteString.head($0.key) }
                let order = s.hashEdits.indices.sorted { a, b in
                    heads[a] != heads[b] ? heads[a] < heads[b]
                        : ByteString.less(s.hashEdits[a].key, s.hashEdits[b].key) || (s.hashEdits[a].key == s.hashEdits[b].key && a < b)
                }
                for k in order {
                    let (key, add) = s.hashEdits[k]
                    if add { try c.put(key, []) } else { try c.delete(key) }
                }
            }
            s.hashEdits = []
            try early?.finish(txn)
            return outcomes
        }
    }

    /// The pass over `ids` in path order: numbers each new file (not indexed, no known content,
    /// nothing links to it, its path not given before in the batch), records its identifier and
    /// content hash, and hands it to `build`. Returns the files left to ``upsertFile``, in order.
    private func findNewFiles(_ files: [FileItem], _ keys: [[UInt8]], _ order: [Int], _ known: [Bool], _ build: NewFileBuild,
                              _ outcomes: inout [FileIndexOutcome], _ txn: borrowing Transaction, _ s: inout WriteSession) throws -> [Int] {
        if s.linksEmpty == nil { s.linksEmpty = try txn.count(links) == 0 }
        var rest: [Int] = []
        var group: [(index: Int, doc: UInt32)] = []
        try txn.withCursor(ids) { c in
            var previous: Int?
            for i in order {
                guard keys[i].count > 1 && keys[i][1] == UInt8(ascii: "/") else {  // the key is "f" and the path
                    throw IndexError(path: directory, reason: .invalidItem("file paths must be absolute: \(files[i].path)"))
                }
                defer { previous = i }
                if let p = previous, keys[p] == keys[i] { rest.append(i); continue }
                if try known[i] || (s.linksEmpty == false && !linkedApps(files[i].path, txn).isEmpty) { rest.append(i); continue }
                // Numbered if new: stored unless the path is indexed (one search for both).
                let doc = s.nextDoc
                let isNew = try keys[i].withUnsafeBytes { key in
                    try withUnsafeBytes(of: doc.bigEndian) { value in
                        guard let existing = try c.insert(key, value) else { return true }
                        if try verified(existing, files[i].path, txn) != nil { return false }
                        try c.put(key, value)  // a hashed key another path had (see `verified`): this one takes it
                        return true
                    }
                }
                guard isNew else { rest.append(i); continue }
                _ = s.allocate()
                if let h = files[i].contentHash { s.hashEdits.append((Self.hashKey(h, doc), true)) }
                outcomes[i] = .added
                group.append((i, doc))
                if group.count == NewFileBuild.groupSize {
                    build.submit(group)
                    group.removeAll(keepingCapacity: true)
                }
            }
        }
        build.submit(group)
        return rest
    }

    /// The batch's attributes: built in, and app attributes (numbered now if new). Throws where a
    /// value's type does not fit its attribute.
    private func attributeTable(_ files: [FileItem], _ txn: borrowing Transaction, _ s: inout WriteSession) throws -> AttributeTable {
        var table = AttributeTable()
        try files.withUnsafeBufferPointer { files in  // items read in place, not copied
            for i in files.indices {
                for (name, value) in files[i].attributes {
                    if let info = table.info(name), Schema.compatible(info.type, value.type) || info.id == Schema.pathID { continue }
                    table.add(try catalog.resolve(name, type: value.type, txn, meta: meta, pending: &s.pendingAttributes, indexPath: directory))
                }
            }
        }
        return table
    }

    /// For each file: whether some indexed file has its content hash (only then can it be a
    /// rename). Looked up in hash order through one cursor.
    private func knownHashes(_ files: [FileItem], _ txn: borrowing Transaction) throws -> [Bool] {
        var known = [Bool](repeating: false, count: files.count)
        guard try txn.count(hashes) > 0 else { return known }
        // Sorted on the hash's first eight bytes: the cursor moves forward through the database.
        var sorted: [(head: UInt64, file: Int)] = []
        sorted.reserveCapacity(files.count)
        files.withUnsafeBufferPointer { f in
            for i in f.indices { if let hash = f[i].contentHash { sorted.append((ByteString.head(hash), i)) } }
        }
        sorted.sort { $0.head < $1.head }
        try txn.withCursor(hashes) { c in
            for (_, i) in sorted {
                known[i] = try files[i].contentHash!.withUnsafeBytes { hash in
                    let prefix = UnsafeRawBufferPointer(rebasing: hash.prefix(16))
                    guard let e = try c.seek(atLeast: prefix), e.key.count >= prefix.count else { return false }
                    return ByteString.equal(UnsafeRawBufferPointer(rebasing: e.key.prefix(prefix.count)), prefix)
                }
            }
        }
        return known
    }

    /// Removes the files at `paths` from the index; returns how many were indexed.
    @discardableResult
    public func removeFiles(paths: [String]) throws(IndexError) -> Int {
        try write { txn, s in
            var n = 0
            for path in paths { if let doc = try lookup(.file, path, txn) { try deleteFile(doc, txn, &s); n += 1 } }
            return n
        }
    }

    /// Removes indexed files at or under `roots` that no longer exist; returns how many.
    @discardableResult
    public func removeMissingFiles(under roots: [String]) throws(IndexError) -> Int {
        var missing: [String] = []
        for root in roots {
            let paths: [String]
            do {
                paths = try environment.read { txn in
                    var docs = try QueryExecutor(index: self, universe: universe(txn)).itemsUnder(root, txn).0.members
                    if let own = try lookup(.file, root, txn) { docs.append(own) }
                    return try docs.compactMap { try record($0, txn) }.filter { $0.kind == .file }.map(\.identifier)
                }
            } catch { throw IndexError.wrapping(error, path: directory) }
            missing += paths.filter(Self.isGone)
        }
        guard !missing.isEmpty else { return 0 }
        return try removeFiles(paths: missing)
    }

    // MARK: Transactions

    func write<R>(_ body: (borrowing Transaction, inout WriteSession) throws -> R) throws(IndexError) -> R {
        do {
            var published: [String: AttributeInfo] = [:]
            let result = try environment.write { txn in
                var s = WriteSession(nextDoc: UInt32(try universe(txn)))
                let r = try body(txn, &s)
                try applyChanges(s.postings, txn)
                if s.nextDoc != s.firstNewDoc { try txn.put(meta, key: Self.nextItemKey, value: Self.docBytes(s.nextDoc)) }
                published = s.pendingAttributes
                return r
            }
            catalog.publish(published)
            return result
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    // MARK: Items

    /// Attribute `id`, built in, published, or numbered in this transaction (`pending`).
    func info(_ id: UInt16, _ pending: [String: AttributeInfo]) -> AttributeInfo? {
        if id < Schema.firstDynamicID { return Schema.builtInTable[Int(id)] }
        return catalog.info(id: id) ?? pending.values.first { $0.id == id }
    }

    /// Attributes by number, numbering new app attributes.
    func resolve(_ attributes: [String: AttributeValue], _ txn: borrowing Transaction,
                 _ s: inout WriteSession) throws -> [UInt16: AttributeValue] {
        var out: [UInt16: AttributeValue] = [:]
        for (name, value) in attributes {
            let info: AttributeInfo
            if let builtIn = Schema.byName[name], Schema.compatible(builtIn.type, value.type) {
                info = builtIn
            } else {
                info = try catalog.resolve(name, type: value.type, txn, meta: meta, pending: &s.pendingAttributes, indexPath: directory)
            }
            out[info.id] = info.stored(value)
        }
        return out
    }

    /// The posting lists an item is in, as a query should see it: nothing for an app item merged
    /// into the file it describes.
    func terms(of doc: UInt32, _ txn: borrowing Transaction, _ s: borrowing WriteSession) throws -> Set<TermKey> {
        guard let r = try record(doc, txn), try !isMerged(r, txn) else { return [] }
        return terms(r, s.pendingAttributes)
    }

    /// Whether `r` is an app item describing an indexed file: merged into the file's item, it
    /// has no lists of its own.
    func isMerged(_ r: ItemRecord, _ txn: borrowing Transaction) throws -> Bool {
        guard r.kind == .app, let url = r.contentURL else { return false }
        return try lookup(.file, url, txn) != nil
    }

    func terms(_ r: ItemRecord, _ pending: [String: AttributeInfo]) -> Set<TermKey> {
        var sink = TermSetSink()
        forEachTerm(r, pending, &sink)
        return sink.terms
    }

    /// Tells `sink` every posting list the item belongs in (a list may come more than once:
    /// the edits tolerate repeats).
    func forEachTerm<Sink: TermSink>(_ r: ItemRecord, _ pending: [String: AttributeInfo], _ sink: inout Sink) {
        sink.exists(Schema.allItemsID)
        let attributes = r.effectiveAttributes
        let pathID = Schema.pathID
        if let path = r.kind == .file ? r.identifier : attributes[pathID]?.stringValues?.first {
            Self.pathTerms(path, of: r.kind, &sink)
        }
        var folded: [UInt8] = []
        folded.reserveCapacity(128)
        for (id, value) in attributes where id != pathID {
            guard let info = info(id, pending) else { continue }
            Self.valueTerms(info, value, &folded, &sink)
        }
    }

    /// The lists of the path of an item of `kind`: `kMDItemPath`'s existence list and the lists
    /// of the directories ``forEachDirectory(_:of:_:)`` names.
    static func pathTerms<Sink: TermSink>(_ path: String, of kind: ItemRecord.Kind, _ sink: inout Sink) {
        sink.exists(Schema.pathID)
        var path = path
        path.withUTF8 { bytes in
            forEachDirectory(bytes, of: kind) { end in sink.term(.directory, Schema.pathID, directoryTerm(bytes, end)) }
        }
    }

    /// Whether an item with a path of `pathBytes` bytes is in its own directory's list. A file
    /// whose `ids` key is its path is not: a directory's own files are read from `ids`
    /// (``forEachFile(directlyIn:_:_:)``), which spares a bulk load a list per directory. App
    /// items and files with hashed keys are.
    static func listsOwnDirectory(_ kind: ItemRecord.Kind, pathBytes: Int) -> Bool {
        kind != .file || pathBytes > maxPlainKeyBytes
    }

    /// Calls `body` with the end (the position of the slash after it) of each directory of an
    /// absolute path whose list holds an item of `kind` at that path: every ancestor but "/"
    /// (which holds everything: the existence list), and but its own directory unless
    /// ``listsOwnDirectory(_:pathBytes:)``.
    @inline(__always) static func forEachDirectory(_ path: UnsafeBufferPointer<UInt8>, of kind: ItemRecord.Kind, _ body: (Int) -> Void) {
        var end = path.count
        if !listsOwnDirectory(kind, pathBytes: path.count) {
            while end > 0 && path[end - 1] != UInt8(ascii: "/") { end -= 1 }
            end -= 1  // the slash after the own directory
        }
        for i in 1..<max(1, end) where path[i] == UInt8(ascii: "/") { body(i) }
    }

    /// The list term of the directory ending at `end` (cut to a term's length).
    static func directoryTerm(_ path: UnsafeBufferPointer<UInt8>, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: path[0..<min(end, TextFolding.maxTermBytes)])
    }

    /// The lists of one attribute value; `folded` is scratch space.
    static func valueTerms<Sink: TermSink>(_ info: AttributeInfo, _ value: AttributeValue, _ folded: inout [UInt8], _ sink: inout Sink) {
        let id = info.id
        sink.exists(id)
        switch value {
        case .string(let string):
            stringTerms(string, id, info.policy, markExact: false, &folded, &sink)
        case .strings(let strings):
            let marked = info.policy.contains(.values) ? foldedTwins(strings) : []
            for (k, string) in strings.enumerated() {
                stringTerms(string, id, info.policy, markExact: marked.contains(k), &folded, &sink)
            }
        case .number(let n), .date(let n):
            if info.policy.contains(.numeric), !n.isNaN { sink.number(id, info.buckets.bucket(n)) }
        }
    }

    /// The lists of one string value of attribute `id`; `folded` is scratch space.
    private static func stringTerms<Sink: TermSink>(_ string: String, _ id: UInt16, _ policy: IndexPolicy, markExact: Bool,
                                                    _ folded: inout [UInt8], _ sink: inout Sink) {
        let changed = TextFolding.fold(string, into: &folded)
        if policy.contains(.values) {
            if folded.count <= TextFolding.maxTermBytes && !folded.contains(0) {
                sink.term(.value, id, folded)
            } else {
                sink.term(.value, id, folded.prefix(TextFolding.maxTermBytes).filter { $0 != 0 })
            }
            if changed || markExact { sink.term(.exactValue, id, TextFolding.exactTerm(folded: folded, raw: string)) }
        }
        if policy.contains(.words) {
            TextFolding.forEachWord(string, folded: folded) { sink.term(.word, id, $0.prefix(TextFolding.maxTermBytes)) }
        }
        if policy.contains(.trigrams) {
            if folded.contains(where: { $0 >= 0x80 }) {
                for t in TextFolding.trigrams(ofFolded: String(decoding: folded, as: UTF8.self)) { sink.term(.trigram, id, t) }
            } else {
                TextFolding.forEachASCIITrigram(folded) { sink.trigram(id, $0, $1, $2) }
            }
        }
    }

    /// Positions in a list of values that folding leaves unchanged while another value of the
    /// list folds to the same text ("work" next to "Work"): they need an exact term too, which
    /// the exact query cannot tell from the variant otherwise.
    static func foldedTwins(_ strings: [String]) -> Set<Int> {
        guard strings.count > 1 else { return [] }
        var scratch: [UInt8] = []
        guard strings.contains(where: { TextFolding.fold($0, into: &scratch) }) else { return [] }
        let all = strings.map(TextFolding.foldedBytes)
        var marked: Set<Int> = []
        for k in strings.indices where all[k].elementsEqual(strings[k].utf8) {
            if all.indices.contains(where: { $0 != k && all[$0] == all[k] && !all[$0].elementsEqual(strings[$0].utf8) }) { marked.insert(k) }
        }
        return marked
    }

    func snapshot(_ docs: [UInt32], _ txn: borrowing Transaction, _ s: borrowing WriteSession) throws -> [UInt32: Set<TermKey>] {
        var out: [UInt32: Set<TermKey>] = [:]
        for d in docs where out[d] == nil { out[d] = try terms(of: d, txn, s) }
        return out
    }

    func recordDiff(_ before: [UInt32: Set<TermKey>], _ txn: borrowing Transaction, _ s: inout WriteSession) throws {
        for (doc, old) in before { s.record(doc, before: old, after: try terms(of: doc, txn, s)) }
    }

    func putRecord(_ doc: UInt32, _ r: ItemRecord, _ txn: borrowing Transaction) throws {
        try txn.put(items, key: Self.docBytes(doc), value: r.encoded())
    }

    /// Recomputes the overlay of the file at `path` from the app items describing it.
    func refreshOverlay(_ path: String, _ txn: borrowing Transaction) throws {
        guard let doc = try lookup(.file, path, txn), var r = try record(doc, txn) else { return }
        var overlay: [UInt16: AttributeValue] = [:]
        for app in try linkedApps(path, txn).sorted() {
            if let a = try record(app, txn) { overlay.merge(a.attributes) { _, new in new } }
        }
        guard overlay != r.overlay else { return }
        r.overlay = overlay
        try putRecord(doc, r, txn)
    }

    static func linkKey(_ path: String, _ doc: UInt32) -> [UInt8] { textKey(path) + [0] + docBytes(doc) }
    static func domainKey(_ domain: String, _ doc: UInt32) -> [UInt8] { Array(domain.utf8.prefix(400)) + [0] + docBytes(doc) }
    static func expiryKey(_ date: Double, _ doc: UInt32) -> [UInt8] {
        let k = NumericKey.key(date)
        return docBytes(UInt32(k >> 32)) + docBytes(UInt32(k & 0xFFFF_FFFF)) + docBytes(doc)
    }
    static func hashKey(_ hash: [UInt8], _ doc: UInt32) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(20)
        key.append(contentsOf: hash.prefix(16))
        withUnsafeBytes(of: doc.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    func indexApp(_ item: SearchableItem, _ txn: borrowing Transaction, _ s: inout WriteSession) throws {
        guard !item.uniqueIdentifier.isEmpty else {
            throw IndexError(path: directory, reason: .invalidItem("an app item needs a non-empty unique identifier"))
        }
        let attributes = try resolve(item.attributes, txn, &s)
        let existing = try lookup(.app, item.uniqueIdentifier, txn)
        let doc = existing ?? s.allocate()
        let old = try existing.flatMap { try record($0, txn) }
        var affected = [doc]
        for url in [old?.contentURL, item.contentURL].compactMap({ $0 }) {
            if let f = try lookup(.file, url, txn) { affected.append(f) }
        }
        let before = try snapshot(affected, txn, s)
        if let old { try removeAppKeys(doc, old, txn) }
        if existing == nil { try txn.put(ids, key: Self.idKey(.app, item.uniqueIdentifier), value: Self.docBytes(doc)) }
        let r = ItemRecord(kind: .app, identifier: item.uniqueIdentifier, domain: item.domainIdentifier, contentURL: item.contentURL,
                           expiration: item.expirationDate, attributes: attributes)
        try putRecord(doc, r, txn)
        if let d = item.domainIdentifier { try txn.put(domains, key: Self.domainKey(d, doc), value: []) }
        if let e = item.expirationDate { try txn.put(expiry, key: Self.expiryKey(e, doc), value: []) }
        if let url = item.contentURL {
            try txn.put(links, key: Self.linkKey(url, doc), value: [])
            s.linksEmpty = false
        }
        for url in Set([old?.contentURL, item.contentURL].compactMap({ $0 })) { try refreshOverlay(url, txn) }
        try recordDiff(before, txn, &s)
    }

    private func removeAppKeys(_ doc: UInt32, _ r: ItemRecord, _ txn: borrowing Transaction) throws {
        if let d = r.domain { try txn.delete(domains, key: Self.domainKey(d, doc)) }
        if let e = r.expiration { try txn.delete(expiry, key: Self.expiryKey(e, doc)) }
        if let url = r.contentURL { try txn.delete(links, key: Self.linkKey(url, doc)) }
    }

    func deleteApp(_ doc: UInt32, _ txn: borrowing Transaction, _ s: inout WriteSession) throws {
        guard let r = try record(doc, txn), r.kind == .app else { return }
        var affected = [doc]
        if let url = r.contentURL, let f = try lookup(.file, url, txn) { affected.append(f) }
        let before = try snapshot(affected, txn, s)
        try removeAppKeys(doc, r, txn)
        try txn.delete(ids, key: Self.idKey(.app, r.identifier))
        try txn.delete(items, key: Self.docBytes(doc))
        if let url = r.contentURL { try refreshOverlay(url, txn) }
        try recordDiff(before, txn, &s)
    }

    func appsInDomain(_ domain: String, _ txn: borrowing Transaction) throws -> [UInt32] {
        var docs: [UInt32] = []
        for prefix in [Array(domain.utf8) + [0], Array(domain.utf8) + [UInt8(ascii: ".")]] {
            try prefix.withUnsafeBytes { start in
                try txn.forEach(domains, from: start) { key, _ in
                    guard key.starts(with: prefix) else { return false }
                    // Exact domain: the key is domain · 0 · number; subdomains: any name after the dot.
                    if prefix.last == 0 && key.count != prefix.count + 4 { return true }
                    if key.count >= 5 { docs.append(Postings.readBE(key, at: key.count - 4)) }
                    return true
                }
            }
        }
        return docs
    }

    func allAppItems(_ txn: borrowing Transaction) throws -> [UInt32] {
        var docs: [UInt32] = []
        try [Namespace.app.rawValue].withUnsafeBytes { start in
            try txn.forEach(ids, from: start) { key, value in
                guard key.first == Namespace.app.rawValue else { return false }
                if let d = Self.doc(value) { docs.append(d) }
                return true
            }
        }
        return docs
    }

    /// Adds, updates or moves one file (the cases ``findNewFiles`` leaves).
    func upsertFile(_ f: FileItem, _ table: AttributeTable, idKey: [UInt8], _ txn: borrowing Transaction, _ s: inout WriteSession,
                    _ idc: borrowing Cursor) throws -> FileIndexOutcome {
        let attributes = table.attributes(of: f)
        if let doc = try verified(idc.seek(exactly: idKey)?.value, f.path, txn), var r = try record(doc, txn) {
            if r.fileState == f.state && r.attributes == attributes && r.contentHash == f.contentHash { return .unchanged }
            let before = try snapshot([doc], txn, s)
            if r.contentHash != f.contentHash {
                if let h = r.contentHash { s.hashEdits.append((Self.hashKey(h, doc), false)) }
                if let h = f.contentHash { s.hashEdits.append((Self.hashKey(h, doc), true)) }
            }
            r.fileState = f.state
            r.attributes = attributes
            r.contentHash = f.contentHash
            try putRecord(doc, r, txn)
            try recordDiff(before, txn, &s)
            return .updated
        }
        // A file with the same bytes whose path is gone: the same file, renamed.
        if let h = f.contentHash, let (doc, old) = try renamedFile(hash: h, txn) {
            let affected = [doc] + (try linkedApps(old.identifier, txn)) + (try linkedApps(f.path, txn))
            let before = try snapshot(affected, txn, s)
            try txn.delete(ids, key: Self.idKey(.file, old.identifier))
            try txn.put(ids, key: Self.idKey(.file, f.path), value: Self.docBytes(doc))
            let r = ItemRecord(kind: .file, identifier: f.path, contentHash: h, fileState: f.state, attributes: attributes)
            try putRecord(doc, r, txn)
            try refreshOverlay(f.path, txn)
            try recordDiff(before, txn, &s)
            return .moved(from: old.identifier)
        }
        let doc = s.allocate()
        let apps = s.linksEmpty == true ? [] : try linkedApps(f.path, txn)
        let before = apps.isEmpty ? [:] : try snapshot(apps, txn, s)
        try idc.put(idKey, Self.docBytes(doc))
        if let h = f.contentHash { s.hashEdits.append((Self.hashKey(h, doc), true)) }
        let r = ItemRecord(kind: .file, identifier: f.path, contentHash: f.contentHash, fileState: f.state, attributes: attributes)
        try putRecord(doc, r, txn)
        if apps.isEmpty {
            s.add(doc, r, self)
        } else {
            try refreshOverlay(f.path, txn)
            try recordDiff(before, txn, &s)
            s.record(doc, before: [], after: try terms(of: doc, txn, s))
        }
        return .added
    }

    /// An indexed file with content `hash` whose path no longer exists.
    private func renamedFile(hash: [UInt8], _ txn: borrowing Transaction) throws -> (UInt32, ItemRecord)? {
        var candidates: [UInt32] = []
        let prefix = Array(hash.prefix(16))
        try prefix.withUnsafeBytes { start in
            try txn.forEach(hashes, from: start) { key, _ in
                guard key.count == 20, key.starts(with: prefix) else { return false }
                candidates.append(Postings.readBE(key, at: 16))
                return true
            }
        }
        for doc in candidates {
            guard let r = try record(doc, txn), r.kind == .file else { continue }
            if Self.isGone(r.identifier) { return (doc, r) }
        }
        return nil
    }

    /// True if nothing is at `path` any more (not merely unreadable).
    static func isGone(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)
    }

    func deleteFile(_ doc: UInt32, _ txn: borrowing Transaction, _ s: inout WriteSession) throws {
        guard let r = try record(doc, txn), r.kind == .file else { return }
        let before = try snapshot([doc] + (try linkedApps(r.identifier, txn)), txn, s)
        try txn.delete(ids, key: Self.idKey(.file, r.identifier))
        if let h = r.contentHash { try txn.delete(hashes, key: Self.hashKey(h, doc)) }
        try txn.delete(items, key: Self.docBytes(doc))
        try recordDiff(before, txn, &s)
    }
}

/// Receives the posting lists of an item.
protocol TermSink {
    mutating func exists(_ attribute: UInt16)
    /// An ASCII trigram (bytes below 0x80; 1 and 2 are the start and end pads).
    mutating func trigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8)
    mutating func number(_ attribute: UInt16, _ bucket: UInt32)
    mutating func term(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>)
}

/// Collects the key prefixes as a set (for diffs on updates and deletions).
struct TermSetSink: TermSink {
    var terms: Set<TermKey> = []
    mutating func exists(_ attribute: UInt16) { terms.insert(TermKey(bytes: Postings.prefix(.exists, attribute, []))) }
    mutating func trigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8) {
        terms.insert(TermKey(bytes: Postings.prefix(.trigram, attribute, [a, b, c])))
    }
    mutating func number(_ attribute: UInt16, _ bucket: UInt32) {
        terms.insert(TermKey(bytes: Postings.prefix(.number, attribute, NumericKey.term(bucket))))
    }
    mutating func term(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>) {
        terms.insert(TermKey(bytes: Postings.prefix(kind, attribute, Array(term))))
    }
}

/// Adds a new item straight to the accumulator (the bulk path: nothing to diff against).
struct AccumulatorSink: TermSink {
    var postings: PostingAccumulator
    var doc: UInt32

    mutating func exists(_ attribute: UInt16) { postings.addExists(attribute, doc) }
    mutating func trigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8) { postings.addTrigram(attribute, a, b, c, doc) }
    mutating func number(_ attribute: UInt16, _ bucket: UInt32) { postings.addNumber(attribute, bucket, doc) }
    mutating func term(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>) {
        postings.add(kind, attribute, term, doc)
    }
}

