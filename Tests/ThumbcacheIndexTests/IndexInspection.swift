@testable import ThumbcacheIndex

/// Reading an index's structures directly, for tests of how something is stored (a search over
/// a few items checks their records instead of reading these).
extension MetadataIndex {
    /// The identifiers (a file's is its path) of the items ``QueryExecutor/itemsUnder(_:_:)`` finds under
    /// `directory`, sorted, and whether that set is exact.
    func identifiersUnder(_ directory: String) throws -> (identifiers: [String], exact: Bool) {
        try environment.read { txn in
            let (set, exact) = try QueryExecutor(index: self, universe: universe(txn)).itemsUnder(directory, txn)
            return (try set.members.map { try record($0, txn)!.identifier }.sorted(), exact)
        }
    }

    /// Whether `directory` has a directory list (kind `d` of `kMDItemPath`).
    func hasDirectoryList(_ directory: String) throws -> Bool {
        let prefix = Postings.prefix(.directory, Schema.pathID, Array(directory.utf8))
        return try environment.read { txn in
            var found = false
            try prefix.withUnsafeBytes { start in
                try txn.forEach(postings, from: start) { key, _ in
                    found = key.starts(with: prefix)
                    return false
                }
            }
            return found
        }
    }

    /// For each chunk of the `kind` list of attribute `name` (term empty), whether it is in the
    /// bitmap form.
    func chunkForms(_ kind: PostingKind, _ name: String) throws -> [Bool] {
        guard let info = catalog.info(named: name) else { return [] }
        let prefix = Postings.prefix(kind, info.id, [])
        return try environment.read { txn in
            var forms: [Bool] = []
            try prefix.withUnsafeBytes { start in
                try txn.forEach(postings, from: start) { key, value in
                    guard key.count == prefix.count + 4, key.starts(with: prefix) else { return false }
                    forms.append(value.first == Postings.bitmapMark)
                    return true
                }
            }
            return forms
        }
    }
}
