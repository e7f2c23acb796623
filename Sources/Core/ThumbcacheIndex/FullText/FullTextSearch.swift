import Foundation
import ThumbcacheLMDB

/// The documents a full-text predicate matched, ascending, and how often each holds it.
struct TextMatch {
    var documents: [UInt32] = []
    var frequencies: [UInt32] = []
}

/// One word's (or one prefix's) postings as read in a transaction: documents ascending, their
/// frequencies, and where each one's positions are in its block (valid in that transaction).
private struct WordList {
    var documents: [UInt32] = []
    var frequencies: [UInt32] = []
    var blocks: [UnsafeRawBufferPointer] = []
    var at: [(block: Int32, offset: Int32)] = []
    /// A prefix's positions, merged from its words (nil for one word: read from `at`).
    var merged: [[UInt32]]?

    func positions(_ i: Int) -> [UInt32] {
        if let merged { return merged[i] }
        return TextPostings.positions(blocks[Int(at[i].block)], at: Int(at[i].offset), count: Int(frequencies[i]))
    }

    /// The `starts` (ascending) for which document `i` has this word at start + `offset`:
    /// its positions decoded as they are needed, no further than the last start.
    func keeping(_ starts: [UInt32], offset: UInt32, at i: Int) -> [UInt32] {
        if merged != nil {
            let here = Set(positions(i))
            return starts.filter { here.contains($0 &+ offset) }
        }
        let block = blocks[Int(at[i].block)]
        var o = Int(at[i].offset)
        var remaining = Int(frequencies[i])
        var position: UInt32 = 0
        var first = true
        var kept: [UInt32] = []
        for start in starts {
            let wanted = start &+ offset
            while remaining > 0, first || position < wanted {
                guard let v = Varint.read(block, &o) else { return kept }
                position = first ? UInt32(truncatingIfNeeded: v) : position &+ UInt32(truncatingIfNeeded: v)
                first = false
                remaining -= 1
                if position >= wanted { break }
            }
            if !first, position == wanted { kept.append(start) }
            if remaining == 0, position < wanted { break }
        }
        return kept
    }
}

extension MetadataIndex {
    /// The documents matching `query`: every word, in order and adjacent; spelled as written
    /// when the query keeps case or diacritics.
    func match(_ query: FullTextQuery, _ txn: borrowing Transaction) throws -> TextMatch {
        var match: TextMatch
        if query.words.count == 1 {
            let list = try wordList(query.words[0], prefix: query.lastIsPrefix, positions: false, txn)
            match = TextMatch(documents: list.documents, frequencies: list.frequencies)
        } else {
            var lists: [WordList] = []
            for (i, word) in query.words.enumerated() {
                let list = try wordList(word, prefix: query.lastIsPrefix && i == query.words.count - 1, positions: true, txn)
                if list.documents.isEmpty { return TextMatch() }
                lists.append(list)
            }
            match = Self.phrases(lists)
        }
        guard !query.matchesFoldedTerms else { return match }
        var kept = TextMatch()
        for (document, frequency) in zip(match.documents, match.frequencies) where try spelledAsWritten(document, query, txn) {
            kept.documents.append(document)
            kept.frequencies.append(frequency)
        }
        return kept
    }

    /// The postings of `word`, or of every word starting with it.
    private func wordList(_ word: [UInt8], prefix: Bool, positions: Bool, _ txn: borrowing Transaction) throws -> WordList {
        if !prefix, !positions { return try documentList(word, txn) }
        var list = WordList()
        // A prefix's words: (document, frequency, positions) gathered, then merged by document.
        var gathered: [(document: UInt32, frequency: UInt32, positions: [UInt32])] = []
        let start = prefix ? word : TextPostings.prefix(word)
        try start.withUnsafeBytes { s in
            try txn.forEach(self.words, from: s) { key, block in
                guard key.starts(with: start), key.count >= word.count + 5 else { return false }
                if !prefix, key.count != start.count + 4 { return false }
                let first = Postings.readBE(key, at: key.count - 4)
                let b = Int32(list.blocks.count)
                if !prefix { list.blocks.append(block) }
                TextPostings.forEach(block, first: first) { document, count, at in
                    if prefix {
                        gathered.append((document, UInt32(count), positions ? TextPostings.positions(block, at: at, count: count) : []))
                    } else {
                        list.documents.append(document)
                        list.frequencies.append(UInt32(count))
                        list.at.append((b, Int32(at)))
                    }
                }
                return true
            }
        }
        if prefix {
            gathered.sort { $0.document < $1.document }
            var merged: [[UInt32]] = []
            for g in gathered {
                if list.documents.last == g.document {
                    list.frequencies[list.frequencies.count - 1] += g.frequency
                    if positions { merged[merged.count - 1] += g.positions }
                } else {
                    list.documents.append(g.document)
                    list.frequencies.append(g.frequency)
                    if positions { merged.append(g.positions) }
                }
            }
            if positions { list.merged = merged.map { $0.sorted() } }
        }
        return list
    }

    /// One word's documents and frequencies, its positions skipped unread.
    private func documentList(_ word: [UInt8], _ txn: borrowing Transaction) throws -> WordList {
        var list = WordList()
        let start = TextPostings.prefix(word)
        try start.withUnsafeBytes { s in
            try txn.forEach(self.words, from: s) { key, block in
                guard key.count == start.count + 4, key.starts(with: start) else { return false }
                TextPostings.forEach(block, first: Postings.readBE(key, at: start.count)) { document, count, _ in
                    list.documents.append(document)
                    list.frequencies.append(UInt32(count))
                }
                return true
            }
        }
        return list
    }

    /// Documents where the lists' words stand in order, adjacent; the frequency is how often.
    /// The documents are intersected first, rarest list leading; positions are read only for
    /// documents in all of them.
    private static func phrases(_ lists: [WordList]) -> TextMatch {
        let order = lists.indices.sorted { lists[$0].documents.count < lists[$1].documents.count }
        var cursors = [Int](repeating: 0, count: lists.count)
        var result = TextMatch()
        let lead = lists[order[0]]
        outer: for i in lead.documents.indices {
            let document = lead.documents[i]
            cursors[order[0]] = i
            for k in order.dropFirst() {
                guard let found = Self.seek(lists[k].documents, document, from: cursors[k]) else { break outer }
                cursors[k] = found
                if lists[k].documents[found] != document { continue outer }
            }
            // Candidate starts from the word with the fewest positions here, then kept where each
            // other word follows at its place: its positions are read as a stream, only as far
            // as the last candidate needs.
            let rarest = lists.indices.min { lists[$0].frequencies[cursors[$0]] < lists[$1].frequencies[cursors[$1]] }!
            var starts = lists[rarest].positions(cursors[rarest]).compactMap { p in p >= UInt32(rarest) ? p - UInt32(rarest) : nil }
            for k in lists.indices where k != rarest && !starts.isEmpty {
                starts = lists[k].keeping(starts, offset: UInt32(k), at: cursors[k])
            }
            if !starts.isEmpty {
                result.documents.append(document)
                result.frequencies.append(UInt32(starts.count))
            }
        }
        return result
    }

    /// The first index at or after `from` whose document is ≥ `document` (galloping), nil past the end.
    static func seek(_ documents: [UInt32], _ document: UInt32, from: Int) -> Int? {
        var lo = from, step = 1
        guard lo < documents.count else { return nil }
        if documents[lo] >= document { return lo }
        var hi = lo + 1
        while hi < documents.count, documents[hi] < document {
            lo = hi
            step *= 2
            hi = lo + step
        }
        hi = min(hi, documents.count)
        while lo < hi {
            let mid = (lo + hi) / 2
            if documents[mid] < document { lo = mid + 1 } else { hi = mid }
        }
        return lo < documents.count ? lo : nil
    }

    /// The stored text of `document`, if it has one.
    func documentText(_ document: UInt32, _ txn: borrowing Transaction) throws -> [UInt8]? {
        try txn.get(texts, key: TextKey.documentKey(document)).flatMap(TextStore.read)?.text
    }

    /// Whether `document` holds the query's words spelled as the query writes them.
    private func spelledAsWritten(_ document: UInt32, _ query: FullTextQuery, _ txn: borrowing Transaction) throws -> Bool {
        guard let stored = try documentText(document, txn) else { return false }
        let n = query.words.count
        var window: [(folded: [UInt8], range: Range<Int>)] = []
        var found = false
        stored.withUnsafeBytes { text in WordBreaker().forEachWord(in: text) { word, range in
            guard !found else { return }
            window.append((Array(word), range))
            if window.count > n { window.removeFirst() }
            guard window.count == n else { return }
            for (i, w) in window.enumerated() {
                let last = query.lastIsPrefix && i == n - 1
                guard last ? w.folded.starts(with: query.words[i]) : w.folded == query.words[i] else { return }
                let raw = String(decoding: UnsafeRawBufferPointer(rebasing: text[w.range]), as: UTF8.self)
                guard query.spelledAlike(raw, i) else { return }
            }
            found = true
        } }
        return found
    }

    /// BM25 (k1 1.2, b 0.75) of each matched document, in `match`'s order.
    func scores(_ match: TextMatch, _ txn: borrowing Transaction) throws -> [Double] {
        try scores(match.documents, [(match.documents.count, match.frequencies)], txn)
    }

    /// The BM25 of `documents` for several predicates at once: each part's number of documents
    /// (its idf) and its frequency in each of `documents`; the scores add up.
    func scores(_ documents: [UInt32], _ parts: [(documents: Int, frequencies: [UInt32])], _ txn: borrowing Transaction) throws -> [Double] {
        let (total, words) = try textStatistics(txn)
        guard total > 0, !documents.isEmpty else { return [] }
        let n = Double(total)
        let idfs = parts.map { log(1 + (n - Double($0.documents) + 0.5) / (Double($0.documents) + 0.5)) }
        let average = max(1, Double(words) / n)
        var normKey: [UInt8] = []
        var norms: [UInt8] = []
        var result = [Double](repeating: 0, count: documents.count)
        for (i, document) in documents.enumerated() {
            let key = TextKey.normsKey(document)
            if key != normKey {
                normKey = key
                norms = try txn.get(texts, key: key).map { Array($0) } ?? []
            }
            let slot = Int(document) % TextKey.normsPerKey
            let lengthFactor = 1.2 * (0.25 + 0.75 * LengthNorm.decode(slot < norms.count ? norms[slot] : 1) / average)
            for (p, part) in parts.enumerated() {
                let tf = Double(part.frequencies[i])
                result[i] += idfs[p] * tf * 2.2 / (tf + lengthFactor)
            }
        }
        return result
    }

    /// The documents matching all of `queries`, each predicate's own document count and its
    /// frequency in each of them (rarest first; intersected by galloping).
    func conjunction(_ queries: [FullTextQuery], _ txn: borrowing Transaction) throws
        -> (documents: [UInt32], parts: [(documents: Int, frequencies: [UInt32])])
    {
        let matches = try queries.map { try match($0, txn) }.sorted { $0.documents.count < $1.documents.count }
        let counts = matches.map(\.documents.count)
        var documents: [UInt32] = []
        var frequencies = [[UInt32]](repeating: [], count: matches.count)
        var cursors = [Int](repeating: 0, count: matches.count)
        outer: for (i, document) in matches[0].documents.enumerated() {
            for k in 1..<matches.count {
                guard let found = Self.seek(matches[k].documents, document, from: cursors[k]) else { break outer }
                cursors[k] = found
                if matches[k].documents[found] != document { continue outer }
            }
            documents.append(document)
            frequencies[0].append(matches[0].frequencies[i])
            for k in 1..<matches.count { frequencies[k].append(matches[k].frequencies[cursors[k]]) }
        }
        return (documents, matches.indices.map { (counts[$0], frequencies[$0]) })
    }

    /// The document holding the text of `content`, if any.
    func document(ofContent content: [UInt8], _ txn: borrowing Transaction) throws -> UInt32? {
        try txn.get(texts, key: TextKey.hashKey(content)).flatMap { $0.count == 4 ? Postings.readBE($0, at: 0) : nil }
    }
}
