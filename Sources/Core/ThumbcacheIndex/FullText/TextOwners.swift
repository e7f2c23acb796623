import ThumbcacheLMDB

/// Which item holds each document's content, so a query turns documents into items by reading
/// an array rather than a range of `hashes` per document: `texts["o" ‖ document / 256]` holds a
/// little-endian UInt32 per document: 0 if no item holds the content, the item + 1 if one does,
/// ``several`` if more do (then `hashes` says which). Kept up to date wherever `hashes` changes.
extension MetadataIndex {
    static let ownersPerKey = 256
    static let several = UInt32.max

    static func ownersKey(_ document: UInt32) -> [UInt8] {
        var key = [UInt8(0x6F)]  // o
        Postings.appendBE(&key, document / UInt32(ownersPerKey))
        return key
    }

    /// Sets the owner of the documents of `contents` (content hashes) from `hashes`.
    func refreshOwners(ofContents contents: some Sequence<[UInt8]>, _ txn: borrowing Transaction) throws {
        for content in contents {
            guard let document = try document(ofContent: content, txn) else { continue }
            var items: [UInt32] = []
            try itemsHolding(Array(content.prefix(16)), txn) { items.append($0); return items.count < 2 }
            let owner = items.isEmpty ? 0 : items.count == 1 ? items[0] + 1 : Self.several
            let key = Self.ownersKey(document)
            var block = try txn.get(texts, key: key).map { Array($0) } ?? []
            let slot = Int(document) % Self.ownersPerKey * 4
            if block.count < slot + 4 { block += [UInt8](repeating: 0, count: slot + 4 - block.count) }
            withUnsafeBytes(of: owner.littleEndian) { for i in 0..<4 { block[slot + i] = $0[i] } }
            try txn.put(texts, key: key, value: block)
        }
    }

    /// Calls `body` with each item whose content is `content`'s (16 bytes); it returns false to stop.
    func itemsHolding(_ content: [UInt8], _ txn: borrowing Transaction, _ body: (UInt32) -> Bool) throws {
        try content.withUnsafeBytes { start in
            try txn.forEach(hashes, from: start) { key, _ in
                guard key.count == 20, key.starts(with: content) else { return false }
                return body(Postings.readBE(key, at: 16))
            }
        }
    }

    /// Calls `body` with the position in `documents` (ascending) and each item holding it.
    func forEachItem(ofDocuments documents: [UInt32], _ txn: borrowing Transaction, _ body: (Int, UInt32) -> Void) throws {
        var blockKey: UInt32 = .max
        var block: UnsafeRawBufferPointer?
        for (i, document) in documents.enumerated() {
            if document / UInt32(Self.ownersPerKey) != blockKey {
                blockKey = document / UInt32(Self.ownersPerKey)
                block = try txn.get(texts, key: Self.ownersKey(document))
            }
            let slot = Int(document) % Self.ownersPerKey * 4
            if let block, slot + 4 <= block.count {
                let owner = UInt32(littleEndian: block.loadUnaligned(fromByteOffset: slot, as: UInt32.self))
                if owner == 0 { continue }
                if owner != Self.several {
                    body(i, owner - 1)
                    continue
                }
            }
            // Several items, or a document indexed before its owners were: ask `hashes`.
            guard let record = try txn.get(texts, key: TextKey.documentKey(document)), record.count >= 16 else { continue }
            try itemsHolding(Array(record[0..<16]), txn) { body(i, $0); return true }
        }
    }
}
