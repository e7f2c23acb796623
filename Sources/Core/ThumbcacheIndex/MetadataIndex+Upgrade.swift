import ThumbcacheLMDB

extension MetadataIndex {
    /// Older formats this code upgrades when it opens them (Docs/FORMAT.md, "Versions"). They
    /// differ from the current one in `postings` (1 and 2), rebuilt from the item records, and
    /// in the full-text postings' block layout (1 to 3), rewritten block by block: nothing is lost.
    static let upgradableVersions = 1..<formatVersion

    /// Items whose lists are made before each application while rebuilding (bounds memory).
    static let rebuildBatch = 50_000

    /// Upgrades an index of an older format in `txn`, one transaction, then stamps the version.
    /// Does nothing if the index is already current (another process may have upgraded it
    /// since this one looked).
    func upgrade(_ txn: borrowing Transaction) throws {
        guard let found = try txn.get(meta, key: Self.versionKey)?.first.map(Int.init), Self.upgradableVersions.contains(found) else {
            return
        }
        if found < 3 { try rebuildPostings(txn) }
        if let layout = try txn.get(texts, key: TextKey.version)?.first, layout < Self.fullTextVersion {
            try rewritePostings(without: [], layout: layout, txn)
            try txn.put(texts, key: TextKey.version, value: [Self.fullTextVersion])
        }
        try txn.put(meta, key: Self.versionKey, value: [UInt8(Self.formatVersion)])
    }

    /// Every posting list made again from the item records.
    func rebuildPostings(_ txn: borrowing Transaction) throws {
        try catalog.reload(txn, meta: meta)
        try txn.removeAll(postings)
        var start: [UInt8] = []
        while true {
            var sink = AccumulatorSink(postings: PostingAccumulator(), itemNumber: 0)
            var items: [(itemNumber: UInt32, record: ItemRecord)] = []
            try start.withUnsafeBytes { from in
                try txn.forEach(self.items, from: start.isEmpty ? nil : from) { key, value in
                    guard key.count == 4, let record = ItemRecord(value) else { return true }
                    items.append((Postings.readBE(key, at: 0), record))
                    return items.count < Self.rebuildBatch
                }
            }
            guard let last = items.last else { break }
            for (itemNumber, record) in items {
                if try isMerged(record, txn) { continue }
                sink.itemNumber = itemNumber
                forEachTerm(record, [:], &sink)
            }
            // Not on two threads: a helper's read transaction would not see the lists written so far.
            try applyChanges(sink.postings, txn, helper: false)
            start = Self.itemNumberBytes(last.itemNumber + 1)
            if items.count < Self.rebuildBatch { break }
        }
    }
}
