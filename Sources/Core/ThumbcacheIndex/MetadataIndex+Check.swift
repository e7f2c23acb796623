import ThumbcacheLMDB

extension MetadataIndex {
    /// Reads every record and checks the format's invariants (Docs/OPERATIONS.md, "Checking a
    /// cache"): each item decodes and its `ids` key names it, and each `ids` entry names the
    /// item whose key it is; each `hashes` entry names an item with that hash; every posting
    /// list decodes and lists stored items only; a content's document is stored. One read
    /// transaction: writers go on meanwhile.
    public func check() throws(IndexError) -> IntegrityReport {
        do {
            return try environment.read { txn in
                var report = IntegrityReport()
                let universe = try self.universe(txn)
                var stored = [UInt64](repeating: 0, count: (max(universe, 1) + 63) / 64)
                func isStored(_ n: UInt32) -> Bool { Int(n) < universe && stored[Int(n) / 64] & 1 << (UInt64(n) % 64) != 0 }
                try txn.forEach(items) { key, value in
                    report.read("items")
                    let number = key.count == 4 ? Postings.readBE(key, at: 0) : nil
                    guard let number, let record = ItemRecord(value), Int(number) < universe else {
                        report.found(IntegrityFinding(database: "items", record: number.map { "item \($0)" } ?? hexText(key),
                                                      problem: number.map { Int($0) >= universe ? "numbered past the index's next item" : "the record does not decode" }
                                                          ?? "the key is not an item number",
                                                      repair: "item removed, lists made again", key: Array(key)))
                        return true
                    }
                    stored[Int(number) / 64] |= 1 << (UInt64(number) % 64)
                    // Its identifier's key names it.
                    if try txn.get(ids, key: Self.idKey(of: record)).flatMap(Self.itemNumber) != number {
                        report.found(IntegrityFinding(database: "items", record: "item \(number) (\(record.identifier))",
                                                      problem: "its identifier's key does not name it", repair: "item removed, lists made again",
                                                      key: Array(key)))
                    }
                    return true
                }
                try checkKeys(&report, isStored, txn)
                try txn.forEach(postings) { key, chunk in
                    report.read("postings")
                    var missing: UInt32?
                    if Postings.header(chunk) == nil {
                        report.found(IntegrityFinding(database: "postings", record: hexText(key), problem: "the chunk does not decode",
                                                      repair: "lists made again", key: Array(key)))
                        return true
                    }
                    Postings.forEach(chunk) { n in if missing == nil, !isStored(n) { missing = n } }
                    if let missing {
                        report.found(IntegrityFinding(database: "postings", record: hexText(key), problem: "lists item \(missing), which is not stored",
                                                      repair: "lists made again", key: Array(key)))
                    }
                    return true
                }
                // A content's document: its record is stored.
                try [TextKey.hash].withUnsafeBytes { start in
                    try txn.forEach(texts, from: start) { key, value in
                        guard key.first == TextKey.hash else { return false }
                        report.read("texts")
                        let document = value.count == 4 ? try txn.get(texts, key: TextKey.documentKey(Postings.readBE(value, at: 0))) : nil
                        if document == nil {
                            report.found(IntegrityFinding(database: "texts", record: hexText(key.dropFirst()), problem: "names a document not stored",
                                                          repair: "entry removed (the words are read again)", key: Array(key)))
                        }
                        return true
                    }
                }
                return report
            }
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    /// `ids` and `hashes`: each names a stored item, the one whose identifier (or content) it is.
    private func checkKeys(_ report: inout IntegrityReport, _ isStored: (UInt32) -> Bool, _ txn: borrowing Transaction) throws {
        try txn.forEach(ids) { key, value in
            report.read("ids")
            let number = Self.itemNumber(value)
            let record = try number.flatMap { n in isStored(n) ? try self.record(n, txn) : nil }
            let own = record.map(Self.idKey(of:))
            if value.count != 4 || own.map({ !key.elementsEqual($0) }) ?? true {
                report.found(IntegrityFinding(database: "ids", record: String(decoding: key.dropFirst(), as: UTF8.self),
                                              problem: record == nil ? "names an item not stored" : "names an item of another identifier",
                                              repair: "key removed", key: Array(key)))
            }
            return true
        }
        try txn.forEach(hashes) { key, _ in
            report.read("hashes")
            let number = key.count == 20 ? Postings.readBE(key, at: 16) : nil
            let record = try number.flatMap { n in isStored(n) ? try self.record(n, txn) : nil }
            if record?.contentHash.map({ key.prefix(16).elementsEqual($0) }) != true {
                report.found(IntegrityFinding(database: "hashes", record: hexText(key.prefix(16)) + (number.map { " → item \($0)" } ?? ""),
                                              problem: record == nil ? "names an item not stored" : "names an item of another content",
                                              repair: "entry removed", key: Array(key)))
            }
            return true
        }
    }

    /// Removes what `report`'s violations name (nothing else) and, when an item went or a list
    /// was wrong, makes every posting list again from the item records, in one write
    /// transaction; how many records went or lists were made again.
    public func repair(_ report: IntegrityReport) throws(IndexError) -> Int {
        guard report.violations > 0 else { return 0 }
        do {
            return try environment.write { txn in
                var removed = 0
                var remake = false
                for finding in report.findings {
                    switch finding.database {
                    case "items":
                        // Its key goes with it, when the key names it.
                        if finding.key.count == 4, let record = try txn.get(items, key: finding.key).flatMap({ ItemRecord($0) }) {
                            let idKey = Self.idKey(of: record)
                            let number = finding.key.withUnsafeBytes { Postings.readBE($0, at: 0) }
                            if try txn.get(ids, key: idKey).flatMap(Self.itemNumber) == number { _ = try txn.delete(ids, key: idKey) }
                        }
                        if try txn.delete(items, key: finding.key) { removed += 1 }
                        remake = true
                    case "ids": if try txn.delete(ids, key: finding.key) { removed += 1 }
                    case "hashes": if try txn.delete(hashes, key: finding.key) { removed += 1 }
                    case "texts":
                        if try txn.delete(texts, key: finding.key) {
                            removed += 1
                            try forgetWordsStamps(txn)
                        }
                    case "postings": remake = true
                    default: break
                    }
                }
                if remake {
                    try rebuildPostings(txn)
                    removed += 1
                }
                return removed
            }
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }
}
