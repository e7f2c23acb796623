import ThumbcacheLMDB
import ThumbcacheSync

/// The words inside files: each distinct content's extracted text is one document, numbered in
/// the order indexed, whatever number of paths hold those bytes (Docs/FORMAT.md, "Full text").
///
/// `texts` keys: `h` · content hash (16 bytes) → document (4 bytes, BE); `d` · document → its
/// ``TextStore`` record (content hash, word count, the text for snippets and spelling checks); `l` · document /
/// 4096 → one ``LengthNorm`` byte per document; `n` → the next document; `s` → documents and words
/// in all (two little-endian UInt64s, for BM25's average length); `v` → the layout's version.
/// `words` holds the postings (``TextPostings``).
///
/// A document is found from items by content hash and back through `hashes`, so a file that
/// changes or goes simply stops reaching its old document; no posting is rewritten on the way.
extension MetadataIndex {
    enum TextKey {
        static let hash: UInt8 = 0x68  // h
        static let document: UInt8 = 0x64  // d
        static let norms: UInt8 = 0x6C  // l
        static let next = [UInt8(0x6E)]  // n
        static let stats = [UInt8(0x73)]  // s
        static let version = [UInt8(0x76)]  // v
        static let normsPerKey = 4096

        static func hashKey(_ content: [UInt8]) -> [UInt8] { [hash] + content.prefix(16) }

        static func documentKey(_ document: UInt32) -> [UInt8] {
            var key = [TextKey.document]
            Postings.appendBE(&key, document)
            return key
        }

        static func normsKey(_ document: UInt32) -> [UInt8] {
            var key = [norms]
            Postings.appendBE(&key, document / UInt32(normsPerKey))
            return key
        }
    }

    /// The full-text layout this code writes (Docs/FORMAT.md).
    package static let fullTextVersion: UInt8 = 2

    /// The stamps under which a warm's vouch for a file's words holds (``StatVouch``): each one a
    /// warm drew and confirmed once every text it read was committed, none from before the last
    /// removal of a text; and how many removals there were.
    package struct WordsStamps: Sendable, Equatable {
        package var valid: [UInt64]
        package var removals: UInt64
    }

    /// At most this many stamps are valid at once; a warm's is not confirmed beyond them (the
    /// files it vouched for are looked at again by the next warm and vouched with an older one).
    package static let maxWordsStamps = 32

    /// The valid words stamps, oldest first. Another index, or this one made again, has none of
    /// another's.
    package func wordsStamps() throws(IndexError) -> WordsStamps {
        do {
            return try environment.read { txn in try readWordsStamps(txn) }
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    /// Makes `stamp` valid, unless a text was removed since `stamps` were read (what it vouched
    /// for may be gone) or enough are valid already; whether it did.
    package func confirmWords(_ stamp: UInt64, since stamps: WordsStamps) throws(IndexError) -> Bool {
        do {
            return try environment.write { txn in
                var now = try readWordsStamps(txn)
                guard now.removals == stamps.removals, now.valid.count < Self.maxWordsStamps else { return false }
                now.valid.append(stamp)
                try txn.put(meta, key: Self.wordsStampsKey, value: Self.bytes(of: now.valid))
                return true
            }
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    /// No stamp holds any more, in the transaction that removes texts.
    func forgetWordsStamps(_ txn: borrowing Transaction) throws {
        let removals = try readWordsStamps(txn).removals &+ 1
        try txn.put(meta, key: Self.wordsRemovalsKey, value: Self.bytes(of: [removals]))
        try txn.put(meta, key: Self.wordsStampsKey, value: [])
    }

    private func readWordsStamps(_ txn: borrowing Transaction) throws -> WordsStamps {
        WordsStamps(valid: try txn.get(meta, key: Self.wordsStampsKey).map(Self.numbers) ?? [],
                    removals: try txn.get(meta, key: Self.wordsRemovalsKey).map(Self.numbers)?.first ?? 0)
    }

    /// Numbers as the full-text records keep them: 8 bytes each, little-endian.
    static func bytes(of numbers: [UInt64]) -> [UInt8] {
        numbers.flatMap { v in withUnsafeBytes(of: v.littleEndian) { Array($0) } }
    }

    /// The numbers `bytes(of:)` wrote (a trailing part of fewer than 8 bytes is ignored).
    static func numbers(_ value: UnsafeRawBufferPointer) -> [UInt64] {
        (0..<value.count / 8).map { UInt64(littleEndian: value.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
    }

    /// Whether the text of each of `contents` (content hashes) is indexed, in one read transaction.
    package func hasTexts(contents: [[UInt8]]) throws(IndexError) -> [Bool] {
        do {
            return try environment.read { txn in try contents.map { try txn.get(texts, key: TextKey.hashKey($0)) != nil } }
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    /// Whether the text of `content` (a content hash) is indexed already.
    package func hasText(content: [UInt8]) throws(IndexError) -> Bool {
        try hasTexts(contents: [content])[0]
    }

    /// Indexes the words of each text under the content hash it was extracted from, in one
    /// transaction. Contents indexed already are skipped. Returns how many texts were new.
    package func indexTexts(_ texts: [(content: [UInt8], text: [UInt8])]) throws(IndexError) -> Int {
        guard !texts.isEmpty else { return 0 }
        do {
            return try environment.write { txn in try indexTexts(texts, txn) }
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    private func indexTexts(_ batch: [(content: [UInt8], text: [UInt8])], _ txn: borrowing Transaction) throws -> Int {
        if try txn.get(texts, key: TextKey.version) == nil { try txn.put(texts, key: TextKey.version, value: [Self.fullTextVersion]) }
        var next = try txn.get(texts, key: TextKey.next).map { Postings.readBE($0, at: 0) } ?? 0
        var (documents, words) = try textStatistics(txn)
        var seen = Set<[UInt8]>()
        var todo: [(document: UInt32, hash: [UInt8], text: [UInt8])] = []
        var bytes = 0
        for (content, text) in batch {
            let hash = Array(content.prefix(16))
            guard hash.count == 16, seen.insert(hash).inserted, try txn.get(self.texts, key: TextKey.hashKey(hash)) == nil else { continue }
            todo.append((next, hash, text))
            next += 1
            bytes += text.count
        }
        guard !todo.isEmpty else { return 0 }
        // Two halves by bytes, the second built on a helper thread: breaking words and building
        // postings is most of indexing, and the transaction waits for neither core.
        var split = todo.count
        if todo.count > 1, bytes > 64 << 10 {
            var half = 0
            split = todo.firstIndex { half += $0.text.count; return half >= bytes / 2 }.map { max(1, $0) } ?? todo.count
        }
        let second = todo[split...]
        let helper = second.isEmpty ? nil : HelperWork { BuiltTexts(second) }
        let first = BuiltTexts(todo[..<split])
        let built = [first] + (try helper.map { [try $0.result()] } ?? [])
        var norms: [(UInt32, UInt8)] = []
        for part in built {
            for d in part.documents {
                try txn.put(self.texts, key: TextKey.documentKey(d.document), value: d.record)
                try txn.put(self.texts, key: TextKey.hashKey(d.hash), value: TextKey.documentKey(d.document).dropFirst().map { $0 })
                try refreshOwners(ofContents: [d.hash], txn)
                norms.append((d.document, LengthNorm.encode(Int(d.words))))
                documents += 1
                words += UInt64(d.words)
            }
        }
        try appendPostings(built, txn)
        try writeNorms(norms, txn)
        var nextBytes: [UInt8] = []
        Postings.appendBE(&nextBytes, next)
        try txn.put(texts, key: TextKey.next, value: nextBytes)
        try setTextStatistics(documents: documents, words: words, txn)
        return norms.count
    }

    /// Appends each term's new entries (from the parts, in document order) after its last block,
    /// which is rewritten with them and cut anew; the parts' sorted terms are merged as they go.
    private func appendPostings(_ parts: [BuiltTexts], _ txn: borrowing Transaction) throws {
        try parts[0].batch.withTerms { a in
            try (parts.count > 1 ? parts[1] : parts[0]).batch.withTerms { b in
                let orderA = parts[0].order, orderB = parts.count > 1 ? parts[1].order : []
                var i = 0, j = 0
                var writer = BlockWriter()
                var seekKey: [UInt8] = []
                try txn.withCursor(self.words) { c in
                    while i < orderA.count || j < orderB.count {
                        let ta = i < orderA.count ? a(orderA[i]) : nil, tb = j < orderB.count ? b(orderB[j]) : nil
                        if let ta, tb == nil || ByteString.less(ta.term, tb!.term) {
                            try appendTerm(ta.term, (ta.first, ta.entries), nil, writer: &writer, seekKey: &seekKey, c); i += 1
                        } else if let tb, ta == nil || ByteString.less(tb.term, ta!.term) {
                            try appendTerm(tb.term, (tb.first, tb.entries), nil, writer: &writer, seekKey: &seekKey, c); j += 1
                        } else {
                            try appendTerm(ta!.term, (ta!.first, ta!.entries), (tb!.first, tb!.entries), writer: &writer, seekKey: &seekKey, c); i += 1; j += 1
                        }
                    }
                }
            }
        }
    }

    /// Rewrites `term`'s last block with the entries of `first` and `second` (batch entries, in
    /// document order) after its own, cut anew into blocks.
    private func appendTerm(_ term: UnsafeRawBufferPointer, _ first: (document: UInt32, entries: [UInt8]),
                            _ second: (document: UInt32, entries: [UInt8])?, writer: inout BlockWriter, seekKey: inout [UInt8],
                            _ c: borrowing Cursor) throws {
        writer.reset(term: term)
        seekKey.removeAll(keepingCapacity: true)
        seekKey.append(contentsOf: term)
        seekKey += [0, 0xFF, 0xFF, 0xFF, 0xFF]
        if let last = try c.seek(atMost: seekKey), last.key.count == term.count + 5,
           last.key.starts(with: seekKey[..<(term.count + 1)]) {
            // Read in place: a block's entries fit one block again, so no put (which could move
            // its page) comes before they are all in the writer's buffers. One written otherwise
            // (damaged) is copied first.
            let blockFirst = Postings.readBE(last.key, at: term.count + 1)
            if last.value.count <= TextPostings.blockBytes {
                try TextPostings.forEach(last.value, first: blockFirst) { try writer.add($0, $1, $2) { try c.put($0, $1) } }
            } else {
                try Array(last.value).withUnsafeBytes { block in
                    _ = try TextPostings.forEach(block, first: blockFirst) { try writer.add($0, $1, $2) { try c.put($0, $1) } }
                }
            }
        }
        try add(first, &writer, c)
        if let second { try add(second, &writer, c) }
        try writer.finish { try c.put($0, $1) }
    }

    private func add(_ source: (document: UInt32, entries: [UInt8]), _ writer: inout BlockWriter, _ c: borrowing Cursor) throws {
        _ = try source.entries.withUnsafeBytes { bytes in
            try BlockWriter.forEachEntry(bytes, count: nil, first: source.document) { try writer.add($0, $1, $2) { try c.put($0, $1) } }
        }
    }

    private func writeNorms(_ norms: [(UInt32, UInt8)], _ txn: borrowing Transaction) throws {
        var i = 0
        while i < norms.count {
            let key = TextKey.normsKey(norms[i].0)
            var block = try txn.get(texts, key: key).map { Array($0) } ?? []
            while i < norms.count, TextKey.normsKey(norms[i].0) == key {
                let slot = Int(norms[i].0) % TextKey.normsPerKey
                if block.count <= slot { block += [UInt8](repeating: 0, count: slot + 1 - block.count) }
                block[slot] = norms[i].1
                i += 1
            }
            try txn.put(texts, key: key, value: block)
        }
    }

    func setTextStatistics(documents: UInt64, words: UInt64, _ txn: borrowing Transaction) throws {
        try txn.put(texts, key: TextKey.stats, value: Self.bytes(of: [documents, words]))
    }

    /// Documents and words indexed in all.
    func textStatistics(_ txn: borrowing Transaction) throws -> (documents: UInt64, words: UInt64) {
        guard let s = try txn.get(texts, key: TextKey.stats), s.count == 16 else { return (0, 0) }
        let n = Self.numbers(s)
        return (n[0], n[1])
    }
}
