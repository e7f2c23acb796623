import Glibc
import ThumbcacheLMDB
import ThumbcacheSync

/// Files: batches of new, changed and moved files, and removals.
extension MetadataIndex {
    /// Adds or updates files, recognising renamed ones by content (see ``FileIndexOutcome``).
    ///
    /// New files — most of a bulk load — are found in one pass over `ids` in path order and
    /// their records and lists built by `NewFileBuild` (on two threads for large batches); the
    /// rest (updates, renames, a path given twice, files apps describe) go one at a time after.
    package func indexFiles(_ files: [FileItem]) throws(IndexError) -> [FileIndexOutcome] {
        try write { txn, session in
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
            do { table = try attributeTable(files, txn, &session) } catch { _ = try? known?.result(); throw error }
            let knownContent = try known?.result() ?? knownHashes(files, txn)
            var outcomes = [FileIndexOutcome](repeating: .unchanged, count: files.count)
            let build = NewFileBuild(files: files, table: table)
            let pass = Result { () throws -> [Int] in
                try findNewFiles(in: files, keys: keys, order: order, knownContent: knownContent, handingTo: build,
                                 outcomes: &outcomes, txn, &session)
            }
            let (groups, postings) = build.finish()
            let rest = try pass.get()
            // Only new files (a bulk load): their lists are final, so a helper starts grouping and
            // planning them while this thread writes records and hashes. Else after the rest's edits.
            let early = rest.isEmpty && postings.listCount >= Self.parallelApplyLists ? PostingApplication(postings, self, early: true) : nil
            defer { early?.cancel() }
            if early == nil { session.postings = postings }
            try appendRecords(of: groups, txn)
            // After the new files' records: a path given twice updates the record just added.
            try txn.withCursor(ids) { idc in
                for i in rest { outcomes[i] = try upsertFile(files[i], table, idKey: keys[i], txn, &session, idc) }
            }
            try applyHashEdits(&session, txn)
            try early?.finish(txn)
            return outcomes
        }
    }

    /// The pass over `ids` in path order: numbers each new file (not indexed, no known content,
    /// nothing links to it, its path not given before in the batch), records its identifier and
    /// content hash, and hands it to `build`. Returns the files left to ``upsertFile``, in order.
    private func findNewFiles(in files: [FileItem], keys: [[UInt8]], order: [Int], knownContent: [Bool], handingTo build: NewFileBuild,
                              outcomes: inout [FileIndexOutcome], _ txn: borrowing Transaction, _ session: inout WriteSession) throws -> [Int] {
        if session.links == .unknown { session.links = try txn.count(links) == 0 ? .none : .some }
        var rest: [Int] = []
        var group: [(index: Int, itemNumber: UInt32)] = []
        try txn.withCursor(ids) { c in
            var previous: Int?
            for i in order {
                guard keys[i].count > 1 && keys[i][1] == UInt8(ascii: "/") else {  // the key is "f" and the path
                    throw IndexError(path: directory, reason: .invalidItem("file paths must be absolute: \(files[i].path)"))
                }
                defer { previous = i }
                if let p = previous, keys[p] == keys[i] { rest.append(i); continue }
                if try knownContent[i] || (session.links == .some && !linkedApps(files[i].path, txn).isEmpty) { rest.append(i); continue }
                // Numbered if new: stored unless the path is indexed (one search for both).
                let itemNumber = session.nextItemNumber
                let isNew = try keys[i].withUnsafeBytes { key in
                    try withUnsafeBytes(of: itemNumber.bigEndian) { value in
                        guard let existing = try c.insert(key, value) else { return true }
                        if try verified(existing, files[i].path, txn) != nil { return false }
                        try c.put(key, value)  // a hashed key another path had (see `verified`): this one takes it
                        return true
                    }
                }
                guard isNew else { rest.append(i); continue }
                _ = session.allocate()
                if let h = files[i].contentHash { session.hashEdits.append((Self.hashKey(h, itemNumber), true)) }
                outcomes[i] = .added
                group.append((i, itemNumber))
                if group.count == NewFileBuild.groupSize {
                    build.submit(group)
                    group.removeAll(keepingCapacity: true)
                }
            }
        }
        build.submit(group)
        return rest
    }

    /// Writes the records of a batch's new files, which are numbered after every item: appended.
    private func appendRecords(of groups: [NewFileBuild.Group], _ txn: borrowing Transaction) throws {
        try txn.withCursor(items) { c in
            for g in groups {
                try g.forEachRecord { itemNumber, record in
                    try withUnsafeBytes(of: itemNumber.bigEndian) { key in try c.put(key, record, append: true) }
                }
            }
        }
    }

    /// Adds and removes the session's `hashes` keys in key order, through one cursor.
    private func applyHashEdits(_ session: inout WriteSession, _ txn: borrowing Transaction) throws {
        let edits = session.hashEdits
        session.hashEdits = []
        // On the hashes' first eight bytes (random: almost never equal), then in the order made.
        let heads = edits.map { ByteString.head($0.key) }
        let order = edits.indices.sorted { a, b in
            heads[a] != heads[b] ? heads[a] < heads[b] : ByteString.less(edits[a].key, edits[b].key) || (edits[a].key == edits[b].key && a < b)
        }
        try txn.withCursor(hashes) { c in
            for k in order {
                if edits[k].add { try c.put(edits[k].key, []) } else { try c.delete(edits[k].key) }
            }
        }
        // Documents of the words inside files follow their contents' items.
        if try txn.get(texts, key: TextKey.next) != nil {
            try refreshOwners(ofContents: Set(edits.map { Array($0.key.prefix(16)) }), txn)
        }
    }

    /// The batch's attributes: built in, and app attributes (numbered now if new). Throws where a
    /// value's type does not fit its attribute.
    private func attributeTable(_ files: [FileItem], _ txn: borrowing Transaction, _ session: inout WriteSession) throws -> AttributeTable {
        var table = AttributeTable()
        try files.withUnsafeBufferPointer { files in  // items read in place, not copied
            for i in files.indices {
                for (name, value) in files[i].attributes {
                    if let info = table.info(name), Schema.compatible(info.type, value.type) || info.id == Schema.pathID { continue }
                    table.add(try catalog.resolve(name, type: value.type, txn, meta: meta, pending: &session.pendingAttributes, indexPath: directory))
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
    package func removeFiles(paths: [String]) throws(IndexError) -> Int {
        try write { txn, session in
            var n = 0
            for path in paths { if let itemNumber = try lookup(.file, path, txn) { try deleteFile(itemNumber, txn, &session); n += 1 } }
            return n
        }
    }

    /// Removes indexed files at or under `roots` that no longer exist; returns how many.
    /// - Parameters:
    ///   - roots: the directories (or files) whose indexed files are checked.
    ///   - seen: items known to exist (a warm saw them): not looked at again, so a re-warm does
    ///     not `stat` every file a second time.
    @discardableResult
    package func removeMissingFiles(under roots: [String], except seen: ItemBitmap? = nil) throws(IndexError) -> Int {
        var missing: [String] = []
        for root in roots {
            let paths: [String]
            do {
                paths = try environment.read { txn in
                    var itemNumbers = try QueryExecutor(index: self, universe: universe(txn)).itemsUnder(root, txn).0.members
                    if let own = try lookup(.file, root, txn) { itemNumbers.append(own) }
                    if let seen { itemNumbers.removeAll(where: seen.contains) }
                    // Each record viewed in place for its kind and path, not decoded: a cold warm
                    // asks this of every file it indexed, and holding them all cost 1 KB a file.
                    var paths: [String] = []
                    for itemNumber in itemNumbers {
                        guard let bytes = try txn.get(items, key: Self.itemNumberBytes(itemNumber)), let view = RecordView(bytes),
                            view.kind == .file
                        else { continue }
                        let path = String(decoding: view.identifier, as: UTF8.self)
                        if Self.isGone(path) { paths.append(path) }
                    }
                    return paths
                }
            } catch { throw IndexError.wrapping(error, path: directory) }
            missing += paths
        }
        guard !missing.isEmpty else { return 0 }
        return try removeFiles(paths: missing)
    }

    /// Adds, updates or moves one file (the cases ``findNewFiles`` leaves).
    func upsertFile(_ file: FileItem, _ table: AttributeTable, idKey: [UInt8], _ txn: borrowing Transaction, _ session: inout WriteSession,
                    _ idc: borrowing Cursor) throws -> FileIndexOutcome {
        let attributes = table.attributes(of: file)
        if let itemNumber = try verified(idc.seek(exactly: idKey)?.value, file.path, txn), var r = try record(itemNumber, txn) {
            if r.fileState == file.state && r.attributes == attributes && r.contentHash == file.contentHash { return .unchanged }
            let before = try snapshot([itemNumber], txn, session)
            if r.contentHash != file.contentHash {
                if let h = r.contentHash { session.hashEdits.append((Self.hashKey(h, itemNumber), false)) }
                if let h = file.contentHash { session.hashEdits.append((Self.hashKey(h, itemNumber), true)) }
            }
            r.fileState = file.state
            r.attributes = attributes
            r.contentHash = file.contentHash
            try putRecord(itemNumber, r, txn)
            try recordDiff(before, txn, &session)
            return .updated
        }
        // A file with the same bytes whose path is gone: the same file, renamed.
        if let h = file.contentHash, let (itemNumber, old) = try renamedFile(hash: h, txn) {
            let affected = [itemNumber] + (try linkedApps(old.identifier, txn)) + (try linkedApps(file.path, txn))
            let before = try snapshot(affected, txn, session)
            try txn.delete(ids, key: Self.idKey(.file, old.identifier))
            try txn.put(ids, key: Self.idKey(.file, file.path), value: Self.itemNumberBytes(itemNumber))
            let r = ItemRecord(kind: .file, identifier: file.path, contentHash: h, fileState: file.state, attributes: attributes)
            try putRecord(itemNumber, r, txn)
            try refreshOverlay(file.path, txn)
            try recordDiff(before, txn, &session)
            return .moved(from: old.identifier)
        }
        let itemNumber = session.allocate()
        let apps = session.links == .none ? [] : try linkedApps(file.path, txn)
        let before = apps.isEmpty ? [:] : try snapshot(apps, txn, session)
        try idc.put(idKey, Self.itemNumberBytes(itemNumber))
        if let h = file.contentHash { session.hashEdits.append((Self.hashKey(h, itemNumber), true)) }
        let r = ItemRecord(kind: .file, identifier: file.path, contentHash: file.contentHash, fileState: file.state, attributes: attributes)
        try putRecord(itemNumber, r, txn)
        if apps.isEmpty {
            session.add(itemNumber, r, self)
        } else {
            try refreshOverlay(file.path, txn)
            try recordDiff(before, txn, &session)
            session.record(itemNumber, before: [], after: try terms(of: itemNumber, txn, session))
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
        for itemNumber in candidates {
            guard let r = try record(itemNumber, txn), r.kind == .file else { continue }
            if Self.isGone(r.identifier) { return (itemNumber, r) }
        }
        return nil
    }

    /// True if nothing is at `path` any more (not merely unreadable).
    static func isGone(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)
    }

    func deleteFile(_ itemNumber: UInt32, _ txn: borrowing Transaction, _ session: inout WriteSession) throws {
        guard let r = try record(itemNumber, txn), r.kind == .file else { return }
        let before = try snapshot([itemNumber] + (try linkedApps(r.identifier, txn)), txn, session)
        try txn.delete(ids, key: Self.idKey(.file, r.identifier))
        if let h = r.contentHash {
            try txn.delete(hashes, key: Self.hashKey(h, itemNumber))
            try refreshOwners(ofContents: [h], txn)
        }
        try txn.delete(items, key: Self.itemNumberBytes(itemNumber))
        try recordDiff(before, txn, &session)
    }
}

/// A set of item numbers as bits: 128 KB for a million items, what a warm of any size keeps to
/// know which indexed files it saw.
package struct ItemBitmap: Sendable, Hashable {
    private var words: [UInt64] = []

    package init() {}

    package mutating func insert(_ item: UInt32) {
        let word = Int(item >> 6)
        if word >= words.count { words += [UInt64](repeating: 0, count: word - words.count + 1 + words.count / 2) }
        words[word] |= 1 << UInt64(item & 63)
    }

    package func contains(_ item: UInt32) -> Bool {
        let word = Int(item >> 6)
        return word < words.count && words[word] & (1 << UInt64(item & 63)) != 0
    }
}

