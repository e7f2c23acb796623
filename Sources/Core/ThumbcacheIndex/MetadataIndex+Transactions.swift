import ThumbcacheLMDB

/// Write transactions and what every change runs: attributes numbered, an item's lists taken
/// before and after, the difference recorded as posting edits.
extension MetadataIndex {
    func write<R>(_ body: (borrowing Transaction, inout WriteSession) throws -> R) throws(IndexError) -> R {
        do {
            var published: [String: AttributeInfo] = [:]
            let result = try environment.write { txn in
                var session = WriteSession(nextItemNumber: UInt32(try universe(txn)))
                let result = try body(txn, &session)
                try applyChanges(session.postings, txn)
                if session.nextItemNumber != session.firstNewItemNumber {
                    try txn.put(meta, key: Self.nextItemKey, value: Self.itemNumberBytes(session.nextItemNumber))
                }
                published = session.pendingAttributes
                return result
            }
            catalog.publish(published)
            return result
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    /// Attribute `id`, built in, published, or numbered in this transaction (`pending`).
    func info(_ id: UInt16, _ pending: [String: AttributeInfo]) -> AttributeInfo? {
        if id < Schema.firstDynamicID { return Schema.builtInTable[Int(id)] }
        return catalog.info(id: id) ?? pending.values.first { $0.id == id }
    }

    /// Attributes by number, numbering new app attributes.
    func resolve(_ attributes: [String: AttributeValue], _ txn: borrowing Transaction,
                 _ session: inout WriteSession) throws -> [UInt16: AttributeValue] {
        var out: [UInt16: AttributeValue] = [:]
        for (name, value) in attributes {
            let info: AttributeInfo
            if let builtIn = Schema.byName[name], Schema.compatible(builtIn.type, value.type) {
                info = builtIn
            } else {
                info = try catalog.resolve(name, type: value.type, txn, meta: meta, pending: &session.pendingAttributes, indexPath: directory)
            }
            out[info.id] = info.stored(value)
        }
        return out
    }

    /// The posting lists an item is in, as a query should see it: nothing for an app item merged
    /// into the file it describes.
    func terms(of itemNumber: UInt32, _ txn: borrowing Transaction, _ session: borrowing WriteSession) throws -> Set<TermKey> {
        guard let r = try record(itemNumber, txn), try !isMerged(r, txn) else { return [] }
        return terms(r, session.pendingAttributes)
    }

    /// Whether `r` is an app item describing an indexed file: merged into the file's item, it
    /// has no lists of its own.
    func isMerged(_ record: ItemRecord, _ txn: borrowing Transaction) throws -> Bool {
        guard record.kind == .app, let url = record.contentURL else { return false }
        return try lookup(.file, url, txn) != nil
    }

    func terms(_ record: ItemRecord, _ pending: [String: AttributeInfo]) -> Set<TermKey> {
        var sink = TermSetSink()
        forEachTerm(record, pending, &sink)
        return sink.terms
    }

    /// Tells `sink` every posting list the item belongs in (a list may come more than once:
    /// the edits tolerate repeats).
    func forEachTerm<Sink: TermSink>(_ record: ItemRecord, _ pending: [String: AttributeInfo], _ sink: inout Sink) {
        sink.exists(Schema.allItemsID)
        let attributes = record.effectiveAttributes
        let pathID = Schema.pathID
        if let path = record.kind == .file ? record.identifier : attributes[pathID]?.stringValues?.first {
            ItemTerms.pathTerms(path, of: record.kind, &sink)
        }
        var folded: [UInt8] = []
        folded.reserveCapacity(128)
        for (id, value) in attributes where id != pathID {
            guard let info = info(id, pending) else { continue }
            ItemTerms.valueTerms(info, value, &folded, &sink)
        }
    }

    func snapshot(_ itemNumbers: [UInt32], _ txn: borrowing Transaction, _ session: borrowing WriteSession) throws -> [UInt32: Set<TermKey>] {
        var out: [UInt32: Set<TermKey>] = [:]
        for d in itemNumbers where out[d] == nil { out[d] = try terms(of: d, txn, session) }
        return out
    }

    func recordDiff(_ before: [UInt32: Set<TermKey>], _ txn: borrowing Transaction, _ session: inout WriteSession) throws {
        for (itemNumber, old) in before { session.record(itemNumber, before: old, after: try terms(of: itemNumber, txn, session)) }
    }

    func putRecord(_ itemNumber: UInt32, _ record: ItemRecord, _ txn: borrowing Transaction) throws {
        try txn.put(items, key: Self.itemNumberBytes(itemNumber), value: record.encoded())
    }
}
