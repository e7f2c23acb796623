import Foundation
import ThumbcacheLMDB

/// The documents a full-text predicate matched, ascending, and how often each holds it.
struct TextMatch {
    var documents: [UInt32] = []
    var frequencies: [UInt32] = []
}

/// One word's (or one prefix's) postings, documents ascending.
private struct WordList {
    var documents: [UInt32] = []
    var frequencies: [UInt32] = []
    var positions: [[UInt32]] = []
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
        var list = WordList()
        var merged: [UInt32: (UInt32, [UInt32])] = [:]
        let start = prefix ? word : TextPostings.prefix(word)
        try start.withUnsafeBytes { s in
            try txn.forEach(self.words, from: s) { key, block in
                guard key.starts(with: start), key.count >= word.count + 5 else { return false }
                if !prefix, key.count != start.count + 4 { return false }
                let first = Postings.readBE(key, at: key.count - 4)
                TextPostings.forEach(block, first: first) { document, count, at in
                    let p = positions ? TextPostings.positions(block, at: at, count: count) : []
                    if prefix {
                        var m = merged[document] ?? (0, [])
                        m.0 += UInt32(count)
                        m.1 += p
                        merged[document] = m
                    } else {
                        list.documents.append(document)
                        list.frequencies.append(UInt32(count))
                        if positions { list.positions.append(p) }
                    }
                }
                return true
            }
        }
        if prefix {
            for document in merged.keys.sorted() {
                let (count, p) = merged[document]!
                list.documents.append(document)
                list.frequencies.append(count)
                if positions { list.positions.append(p.sorted()) }
            }
        }
        return list
    }

    /// Documents where the lists' words stand in order, adjacent; the frequency is how often.
    private static func phrases(_ lists: [WordList]) -> TextMatch {
        var result = TextMatch()
        var cursors = [Int](repeating: 0, count: lists.count)
        var i0 = 0
        outer: while i0 < lists[0].documents.count {
            let document = lists[0].documents[i0]
            for k in 1..<lists.count {
                let docs = lists[k].documents
                while cursors[k] < docs.count, docs[cursors[k]] < document { cursors[k] += 1 }
                guard cursors[k] < docs.count else { break outer }
                if docs[cursors[k]] != document { i0 += 1; continue outer }
            }
            var count: UInt32 = 0
            for p in lists[0].positions[i0] {
                var all = true
                for k in 1..<lists.count where !Self.sortedContains(lists[k].positions[cursors[k]], p &+ UInt32(k)) {
                    all = false
                    break
                }
                if all { count += 1 }
            }
            if count > 0 {
                result.documents.append(document)
                result.frequencies.append(count)
            }
            i0 += 1
        }
        return result
    }

    private static func sortedContains(_ a: [UInt32], _ v: UInt32) -> Bool {
        var lo = 0, hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid] < v { lo = mid + 1 } else { hi = mid }
        }
        return lo < a.count && a[lo] == v
    }

    /// The stored text of `document`, if it has one.
    func documentText(_ document: UInt32, _ txn: borrowing Transaction) throws -> (hash: [UInt8], text: UnsafeRawBufferPointer)? {
        guard let record = try txn.get(texts, key: TextKey.documentKey(document)), record.count >= 17 else { return nil }
        var offset = 16
        guard Varint.read(record, &offset) != nil else { return nil }
        return (Array(record[0..<16]), UnsafeRawBufferPointer(rebasing: record[offset...]))
    }

    /// Whether `document` holds the query's words spelled as the query writes them.
    private func spelledAsWritten(_ document: UInt32, _ query: FullTextQuery, _ txn: borrowing Transaction) throws -> Bool {
        guard let (_, text) = try documentText(document, txn) else { return false }
        let n = query.words.count
        var window: [(folded: [UInt8], range: Range<Int>)] = []
        var found = false
        WordBreaker().forEachWord(in: text) { word, range in
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
        }
        return found
    }

    /// BM25 (k1 1.2, b 0.75) of each matched document, in `match`'s order.
    func scores(_ match: TextMatch, _ txn: borrowing Transaction) throws -> [Double] {
        let (documents, words) = try textStatistics(txn)
        guard documents > 0, !match.documents.isEmpty else { return [] }
        let n = Double(documents), df = Double(match.documents.count)
        let idf = log(1 + (n - df + 0.5) / (df + 0.5))
        let average = max(1, Double(words) / n)
        var normKey: [UInt8] = []
        var norms: [UInt8] = []
        return try zip(match.documents, match.frequencies).map { document, frequency in
            let key = TextKey.normsKey(document)
            if key != normKey {
                normKey = key
                norms = try txn.get(texts, key: key).map { Array($0) } ?? []
            }
            let slot = Int(document) % TextKey.normsPerKey
            let length = LengthNorm.decode(slot < norms.count ? norms[slot] : 1)
            let tf = Double(frequency)
            return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
        }
    }

    /// The items whose content is `document`'s.
    func items(ofDocument document: UInt32, _ txn: borrowing Transaction, _ body: (UInt32) -> Void) throws {
        guard let record = try txn.get(texts, key: TextKey.documentKey(document)), record.count >= 16 else { return }
        let prefix = Array(record[0..<16])
        try prefix.withUnsafeBytes { start in
            try txn.forEach(hashes, from: start) { key, _ in
                guard key.count == 20, key.starts(with: prefix) else { return false }
                body(Postings.readBE(key, at: 16))
                return true
            }
        }
    }

    /// The document holding the text of `content`, if any.
    func document(ofContent content: [UInt8], _ txn: borrowing Transaction) throws -> UInt32? {
        try txn.get(texts, key: TextKey.hashKey(content)).flatMap { $0.count == 4 ? Postings.readBE($0, at: 0) : nil }
    }
}
