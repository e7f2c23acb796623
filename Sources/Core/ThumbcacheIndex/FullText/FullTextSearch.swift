import Glibc
import ThumbcacheLMDB

/// The documents a full-text predicate matched, ascending, and what BM25 scores them by: per
/// word of the predicate (one part for a word or a prefix), how many documents hold it and how
/// often each matched document does. A phrase scores as its words do, as Xapian's phrases do;
/// the phrase decides which documents match, so each is checked only up to its first place.
struct TextMatch {
    var documents: [UInt32] = []
    var parts: [(documents: Int, frequencies: [UInt32])] = []
}

extension MetadataIndex {
    /// The documents matching `query`: every word, in order and adjacent; spelled as written
    /// when the query keeps case or diacritics.
    func match(_ query: FullTextQuery, _ txn: borrowing Transaction) throws -> TextMatch {
        var match = TextMatch()
        if query.words.count == 1 {
            var cursor = query.lastIsPrefix ? try prefixMatch(query.words[0], positions: false, txn) : try PostingCursor(word: query.words[0], in: words, txn)
            match = cursor.remaining()
        } else {
            var cursors: [PostingCursor] = []
            for (i, word) in query.words.enumerated() {
                let cursor = query.lastIsPrefix && i == query.words.count - 1
                    ? try prefixMatch(word, positions: true, txn) : try PostingCursor(word: word, in: words, txn)
                if cursor.atEnd { return TextMatch() }
                cursors.append(cursor)
            }
            match = Self.phrases(&cursors)
        }
        guard !query.matchesFoldedTerms else { return match }
        var kept = TextMatch(parts: match.parts.map { ($0.documents, []) })
        for (i, document) in match.documents.enumerated() where try spelledAsWritten(document, query, txn) {
            kept.documents.append(document)
            for p in kept.parts.indices { kept.parts[p].frequencies.append(match.parts[p].frequencies[i]) }
        }
        return kept
    }

    /// The postings of every word starting with `prefix`, merged by document.
    private func prefixMatch(_ prefix: [UInt8], positions: Bool, _ txn: borrowing Transaction) throws -> PostingCursor {
        var gathered: [(document: UInt32, frequency: UInt32, positions: [UInt32])] = []
        try prefix.withUnsafeBytes { s in
            try txn.forEach(self.words, from: s) { key, block in
                guard key.starts(with: prefix), key.count >= prefix.count + 5 else { return false }
                if positions {
                    TextPostings.forEach(block, first: Postings.readBE(key, at: key.count - 4)) { document, count, bytes in
                        gathered.append((document, UInt32(count), TextPostings.positions(bytes, count: count)))
                    }
                } else {
                    TextPostings.forEachDocument(block, first: Postings.readBE(key, at: key.count - 4)) { document, count in
                        gathered.append((document, count, []))
                    }
                }
                return true
            }
        }
        gathered.sort { $0.document < $1.document }
        var documents: [UInt32] = []
        var frequencies: [UInt32] = []
        var merged: [[UInt32]] = []
        for g in gathered {
            if documents.last == g.document {
                frequencies[frequencies.count - 1] += g.frequency
                if positions { merged[merged.count - 1] += g.positions }
            } else {
                documents.append(g.document)
                frequencies.append(g.frequency)
                if positions { merged.append(g.positions) }
            }
        }
        return PostingCursor(documents: documents, frequencies: frequencies, positions: positions ? merged.map { $0.sorted() } : nil)
    }

    /// Documents where the cursors' words stand in order, adjacent, with each word's frequency.
    /// The documents are intersected first (each cursor leaping to the furthest document any
    /// other stands on); positions are read only for documents in all of them, and only until
    /// the phrase is found.
    private static func phrases(_ cursors: inout [PostingCursor]) -> TextMatch {
        var result = TextMatch(parts: cursors.map { ($0.count, []) })
        var streams: [PositionStream] = []
        while let document = intersect(&cursors) {
            streams.removeAll(keepingCapacity: true)
            for k in cursors.indices { streams.append(cursors[k].positions()) }
            let rarest = cursors.indices.min { cursors[$0].frequency < cursors[$1].frequency }!
            let found = streams.withUnsafeMutableBufferPointer { Self.holdsPhrase($0, from: rarest) }
            if found {
                result.documents.append(document)
                for k in cursors.indices { result.parts[k].frequencies.append(cursors[k].frequency) }
            }
            cursors[0].advance()
        }
        return result
    }

    /// Whether the streams' words stand in order, adjacent, somewhere: starts taken from the
    /// places of word `rarest` (the fewest here), each other word read on to its place.
    private static func holdsPhrase(_ streams: UnsafeMutableBufferPointer<PositionStream>, from rarest: Int) -> Bool {
        if streams.count == 2 {
            // Two words, the common phrase: both streams in locals, so they stay in registers.
            var lead = streams[rarest], other = streams[1 - rarest]
            let shift = UInt32(rarest), ahead = UInt32(1 - rarest)
            while lead.next() {
                guard lead.position >= shift else { continue }
                let wanted = lead.position - shift + ahead
                if other.reach(wanted) { return true }
                if other.position < wanted { return false }
            }
            return false
        }
        search: while streams[rarest].next() {
            guard streams[rarest].position >= UInt32(rarest) else { continue }
            let start = streams[rarest].position - UInt32(rarest)
            for k in streams.indices where k != rarest {
                let wanted = start &+ UInt32(k)
                if !streams[k].reach(wanted) {
                    if streams[k].position < wanted { return false }  // its places ended
                    continue search
                }
            }
            return true
        }
        return false
    }

    /// Moves every cursor to the next document they all hold and returns it; nil when one ends.
    /// Each seeks to the furthest document another stands on, so the rarest word sets the pace.
    private static func intersect(_ cursors: inout [PostingCursor]) -> UInt32? {
        guard !cursors[0].atEnd else { return nil }
        var target = cursors[0].document
        var agreed = 0
        var k = 0
        while agreed < cursors.count {
            guard cursors[k].seek(target) else { return nil }
            if cursors[k].document == target {
                agreed += 1
            } else {
                target = cursors[k].document
                agreed = 1
            }
            k = (k + 1) % cursors.count
        }
        return target
    }

    /// The stored text of `document`, if it has one.
    func documentText(_ document: UInt32, _ txn: borrowing Transaction) throws -> [UInt8]? {
        try documentRecord(document, txn).flatMap(TextStore.read)?.text
    }

    /// The record of `document` in `texts` (TextStore's layout), valid in `txn`.
    func documentRecord(_ document: UInt32, _ txn: borrowing Transaction) throws -> UnsafeRawBufferPointer? {
        try txn.get(texts, key: TextKey.documentKey(document))
    }

    /// Whether `document` holds the query's words spelled as the query writes them.
    private func spelledAsWritten(_ document: UInt32, _ query: FullTextQuery, _ txn: borrowing Transaction) throws -> Bool {
        guard let stored = try documentText(document, txn) else { return false }
        let n = query.words.count
        var window: [(folded: [UInt8], range: Range<Int>)] = []
        var found = false
        stored.withUnsafeBytes { text in WordBreaker().forEachWordWhile(in: text) { word, range in
            window.append((Array(word), range))
            if window.count > n { window.removeFirst() }
            guard window.count == n else { return true }
            for (i, w) in window.enumerated() {
                let last = query.lastIsPrefix && i == n - 1
                guard last ? w.folded.starts(with: query.words[i]) : w.folded == query.words[i] else { return true }
                let raw = String(decoding: UnsafeRawBufferPointer(rebasing: text[w.range]), as: UTF8.self)
                guard query.spelledAlike(raw, i) else { return true }
            }
            found = true
            return false
        } }
        return found
    }

    /// BM25 (k1 1.2, b 0.75) of each matched document, in `match`'s order.
    func scores(_ match: TextMatch, _ txn: borrowing Transaction) throws -> [Double] {
        try scores(match.documents, match.parts, txn)
    }

    /// The BM25 of `documents` for several predicates at once: each part's number of documents
    /// (its idf) and its frequency in each of `documents`; the scores add up.
    func scores(_ documents: [UInt32], _ parts: [(documents: Int, frequencies: [UInt32])], _ txn: borrowing Transaction) throws -> [Double] {
        let (total, words) = try textStatistics(txn)
        guard total > 0, !documents.isEmpty else { return [] }
        let n = Double(total)
        let idfs = parts.map { log(1 + (n - Double($0.documents) + 0.5) / (Double($0.documents) + 0.5)) }
        let average = max(1, Double(words) / n)
        var page = -1
        var norms: UnsafeRawBufferPointer?  // valid in `txn`
        var result = [Double](repeating: 0, count: documents.count)
        for (i, document) in documents.enumerated() {
            if Int(document) / TextKey.normsPerKey != page {
                page = Int(document) / TextKey.normsPerKey
                norms = try txn.get(texts, key: TextKey.normsKey(document))
            }
            let slot = Int(document) % TextKey.normsPerKey
            let norm = norms.map { slot < $0.count ? $0[slot] : 1 } ?? 1
            let lengthFactor = 1.2 * (0.25 + 0.75 * LengthNorm.decode(norm) / average)
            for (p, part) in parts.enumerated() {
                let tf = Double(part.frequencies[i])
                result[i] += idfs[p] * tf * 2.2 / (tf + lengthFactor)
            }
        }
        return result
    }

    /// The documents matching all of `queries`, and the parts BM25 scores them by (each
    /// predicate's, in order). A predicate of one word is walked block by block as the
    /// intersection needs it; any other is matched first.
    func conjunction(_ queries: [FullTextQuery], _ txn: borrowing Transaction) throws -> TextMatch {
        var matches: [TextMatch?] = []
        var cursors: [PostingCursor] = []
        for query in queries {
            if query.words.count == 1, !query.lastIsPrefix, query.matchesFoldedTerms {
                matches.append(nil)
                cursors.append(try PostingCursor(word: query.words[0], in: words, txn))
            } else {
                let match = try match(query, txn)
                matches.append(match)
                cursors.append(PostingCursor(documents: match.documents, frequencies: match.documents.map { _ in 1 }))
            }
        }
        var result = TextMatch(parts: zip(matches, cursors).flatMap { match, cursor in
            match.map { $0.parts.map { ($0.documents, []) } } ?? [(cursor.count, [])]
        })
        while let document = Self.intersect(&cursors) {
            result.documents.append(document)
            var p = 0
            for k in cursors.indices {
                if let match = matches[k] {
                    for part in match.parts {
                        result.parts[p].frequencies.append(part.frequencies[cursors[k].row])
                        p += 1
                    }
                } else {
                    result.parts[p].frequencies.append(cursors[k].frequency)
                    p += 1
                }
            }
            cursors[0].advance()
        }
        return result
    }

    /// The document holding the text of `content`, if any.
    func document(ofContent content: [UInt8], _ txn: borrowing Transaction) throws -> UInt32? {
        try txn.get(texts, key: TextKey.hashKey(content)).flatMap { $0.count == 4 ? Postings.readBE($0, at: 0) : nil }
    }
}
