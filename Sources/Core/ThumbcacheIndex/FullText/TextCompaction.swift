import FoundationEssentials
import ThumbcacheLMDB

/// What a compaction of the words inside files did.
package struct TextCompaction: Sendable, Codable, Hashable {
    /// Documents no item holds any more (their files changed or went), removed.
    package var documentsRemoved = 0
    /// Bytes of the full-text databases (`texts` and `words`) before and after.
    package var bytesBefore = 0
    package var bytesAfter = 0
    package var seconds = 0.0
}

extension MetadataIndex {
    /// Removes the documents no item holds any more (a changed file's old text, a deleted
    /// file's), and rewrites the postings in key order into full pages, without them. One write
    /// transaction: readers go on seeing the old index until it commits. `dryRun` only counts.
    package func compactText(dryRun: Bool = false) throws(IndexError) -> TextCompaction {
        let start = Date()
        do {
            var report = try environment.write { txn -> TextCompaction in
                var report = TextCompaction()
                report.bytesBefore = try textBytes(txn)
                var dead: [(hash: [UInt8], document: UInt32)] = []
                try [TextKey.hash].withUnsafeBytes { s in
                    try txn.forEach(texts, from: s) { key, value in
                        guard key.count == 17, key.first == TextKey.hash, value.count == 4 else { return key.first == TextKey.hash }
                        let hash = Array(key[1...])
                        var held = false
                        try itemsHolding(hash, txn) { _ in held = true; return false }
                        if !held { dead.append((hash, Postings.readBE(value, at: 0))) }
                        return true
                    }
                }
                report.documentsRemoved = dead.count
                guard !dryRun else { return report }
                var deadWords: UInt64 = 0
                for (hash, document) in dead {
                    if let record = try txn.get(texts, key: TextKey.documentKey(document)), record.count > 16 {
                        var offset = 16
                        deadWords += Varint.read(record, &offset) ?? 0
                    }
                    _ = try txn.delete(texts, key: TextKey.documentKey(document))
                    _ = try txn.delete(texts, key: TextKey.hashKey(hash))
                }
                try rewritePostings(without: Set(dead.map(\.document)), txn)
                if !dead.isEmpty {
                    try forgetWordsStamps(txn)
                    let (documents, words) = try textStatistics(txn)
                    try setTextStatistics(documents: documents - UInt64(dead.count), words: words - min(words, deadWords), txn)
                }
                report.bytesAfter = try textBytes(txn)
                return report
            }
            if dryRun { report.bytesAfter = report.bytesBefore }
            report.seconds = Date().timeIntervalSince(start)
            return report
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    private func textBytes(_ txn: borrowing Transaction) throws -> Int {
        let t = try txn.statistics(texts), w = try txn.statistics(words)
        return (t.pages + w.pages) * t.pageSize
    }

    /// Every term's entries again, in blocks filled to the limit, into `wordsScratch` in key
    /// order (appended: full pages), then back into `words` the same way. `layout` is the one
    /// the blocks are in now; they are written in the current one. A term's only block, with
    /// nothing to remove and in the current layout, is copied as it is (most words have one).
    func rewritePostings(without dead: Set<UInt32>, layout: UInt8 = fullTextVersion, _ txn: borrowing Transaction) throws {
        try txn.removeAll(wordsScratch)
        let copiesLoneBlocks = dead.isEmpty && layout == Self.fullTextVersion
        try txn.withCursor(wordsScratch) { out in
            var term: [UInt8] = []
            var writer = BlockWriter()
            // The current term's first block, while it may be its only one (valid in `txn`).
            var lone: (key: UnsafeRawBufferPointer, block: UnsafeRawBufferPointer)?
            try txn.forEach(words) { key, block in
                guard key.count >= 5 else { return true }
                let word = UnsafeRawBufferPointer(rebasing: key[0..<(key.count - 5)])
                if term.isEmpty || !word.elementsEqual(term) {
                    if let l = lone { try out.put(l.key, l.block, append: true) } else { try writer.finish { try out.put($0, $1, append: true) } }
                    lone = nil
                    term.removeAll(keepingCapacity: true)
                    term.append(contentsOf: word)
                    writer.reset(term: word)
                    if copiesLoneBlocks {
                        lone = (key, block)
                        return true
                    }
                } else if let l = lone {
                    try addBlock(l.block, first: Postings.readBE(l.key, at: l.key.count - 4), layout: layout, without: dead, &writer, out)
                    lone = nil
                }
                try addBlock(block, first: Postings.readBE(key, at: key.count - 4), layout: layout, without: dead, &writer, out)
                return true
            }
            if let l = lone { try out.put(l.key, l.block, append: true) } else { try writer.finish { try out.put($0, $1, append: true) } }
        }
        try txn.removeAll(words)
        try txn.withCursor(words) { out in
            try txn.forEach(wordsScratch) { key, value in
                try out.put(key, value, append: true)
                return true
            }
        }
        try txn.removeAll(wordsScratch)
    }

    /// Adds the entries of `block` (in `layout`) but those of `dead` documents to `writer`.
    private func addBlock(_ block: UnsafeRawBufferPointer, first: UInt32, layout: UInt8, without dead: Set<UInt32>,
                          _ writer: inout BlockWriter, _ out: borrowing Cursor) throws {
        if layout == 1 {
            var offset = 0
            let count = Varint.read(block, &offset).map(Int.init)
            try BlockWriter.forEachEntry(UnsafeRawBufferPointer(rebasing: block[offset...]), count: count, first: first) { document, occurrences, positions in
                guard !dead.contains(document) else { return }
                try writer.add(document, occurrences, positions) { try out.put($0, $1, append: true) }
            }
        } else {
            try TextPostings.forEach(block, first: first) { document, occurrences, positions in
                guard !dead.contains(document) else { return }
                try writer.add(document, occurrences, positions) { try out.put($0, $1, append: true) }
            }
        }
    }
}
