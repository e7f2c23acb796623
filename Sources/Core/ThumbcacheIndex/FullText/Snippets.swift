import ThumbcacheLMDB

/// A passage of a file's text around the words a search matched.
public struct TextSnippet: Sendable, Hashable {
    /// About 200 bytes of the text, with "…" where it was cut.
    public var text: String
    /// The matched words, as UTF-8 byte offsets into ``text``.
    public var matches: [Range<Int>]

    /// The text with each stretch between matches passed through `plain` and each match
    /// through `match` (a terminal's bold, a page's `<mark>` after escaping).
    package func marked(plain: (String) -> String, match: (String) -> String) -> String {
        let bytes = Array(text.utf8)
        var out = ""
        var at = 0
        for m in matches where m.lowerBound >= at && m.upperBound <= bytes.count {
            out += plain(String(decoding: bytes[at..<m.lowerBound], as: UTF8.self)) + match(String(decoding: bytes[m], as: UTF8.self))
            at = m.upperBound
        }
        return out + plain(String(decoding: bytes[at...], as: UTF8.self))
    }
}

extension MetadataIndex {
    /// Words around a match shown in a snippet, and the snippet's size in bytes at most.
    static let snippetWords = 24
    static let snippetBytes = 200
    /// How much of a text is decompressed first: a passage that holds every query word is found
    /// there, and the whole text read only when none is (a search showed 20 snippets of texts up to
    /// 1 MiB each, decompressed whole, as a tenth of its time).
    static let snippetHeadBytes = 64 << 10

    /// The passage of `document`'s text with the most distinct query words in
    /// ``snippetWords`` words (the first such), and where they are.
    func snippet(_ document: UInt32, _ queries: [FullTextQuery], _ txn: borrowing Transaction) throws -> TextSnippet? {
        guard !queries.isEmpty, let record = try documentRecord(document, txn) else { return nil }
        // The head ends at its last ASCII space, so that no word or stretch for ICU is cut.
        if let head = TextStore.read(record, prefix: Self.snippetHeadBytes), !head.isWhole,
           let end = head.text.lastIndex(where: WordBreaker.isASCIISpace),
           case .found(let passage) = head.text.withUnsafeBytes({ snippet(of: UnsafeRawBufferPointer(rebasing: $0[..<end]), queries, isWhole: false) }) {
            return passage
        }
        guard let whole = TextStore.read(record)?.text else { return nil }
        return switch whole.withUnsafeBytes({ snippet(of: $0, queries, isWhole: true) }) {
        case .found(let passage): passage
        case .none, .unsettled: nil
        }
    }

    private enum Passage {
        case found(TextSnippet)
        case none
        /// The beginning of a text does not settle it: the whole text must be read.
        case unsettled
    }

    /// The passage in `text`, which is the document's whole text or its beginning.
    private func snippet(of text: UnsafeRawBufferPointer, _ queries: [FullTextQuery], isWhole: Bool) -> Passage {
        var words: [(range: Range<Int>, matched: Int?)] = []
        let wanted = queries.flatMap { q in q.words.enumerated().map { (word: $0.element, prefix: q.lastIsPrefix && $0.offset == q.words.count - 1) } }
        // The window of ``snippetWords`` words from a match with the most distinct query words
        // (the first such). Windows are weighed as soon as they are whole, in order, so the walk
        // ends at the first one holding every query word instead of at the text's end.
        var best = (start: -1, distinct: 0)
        var hits: [Int] = []  // the words that matched, in order; those before `weighed` are weighed
        var weighed = 0
        // Weighs the windows that are whole (all of them at the text's end); false once one holds every query word.
        func weigh(final: Bool) -> Bool {
            while weighed < hits.count, final || hits[weighed] + Self.snippetWords <= words.count {
                let start = hits[weighed]
                weighed += 1
                let distinct = Set(words[start..<min(words.count, start + Self.snippetWords)].compactMap(\.matched)).count
                if distinct > best.distinct { best = (start, distinct) }
                if distinct == wanted.count { return false }
            }
            return true
        }
        WordBreaker().forEachWordWhile(in: text) { word, range in
            let hit = wanted.firstIndex { $0.prefix ? word.starts(with: $0.word) : word.elementsEqual($0.word) }
            if hit != nil { hits.append(words.count) }
            words.append((range, hit))
            return weigh(final: false)
        }
        if best.distinct < wanted.count {
            guard isWhole else { return .unsettled }
            _ = weigh(final: true)
        }
        guard best.start >= 0 else { return .none }
        let lead = max(0, best.start - 4)
        var from = words[lead].range.lowerBound
        var to = words[min(words.count - 1, best.start + Self.snippetWords - 1)].range.upperBound
        if to - from > Self.snippetBytes { to = max(words[best.start].range.upperBound, from + Self.snippetBytes) }
        if to - from > Self.snippetBytes { from = words[best.start].range.lowerBound }
        while from > 0, from < text.count, text[from] & 0xC0 == 0x80 { from -= 1 }
        while to < text.count, text[to] & 0xC0 == 0x80 { to += 1 }
        // An ellipsis only where words were cut off, not mere space.
        let before = text[..<from].contains { !WordBreaker.isASCIISpace($0) } ? "…" : ""
        let more = text[to...].contains { !WordBreaker.isASCIISpace($0) }
        guard more || isWhole else { return .unsettled }
        let after = more ? "…" : ""
        let shift = before.utf8.count
        let body = String(decoding: UnsafeRawBufferPointer(rebasing: text[from..<to]), as: UTF8.self)
        let matches = words.filter { $0.matched != nil && $0.range.lowerBound >= from && $0.range.upperBound <= to }
            .map { ($0.range.lowerBound - from + shift)..<($0.range.upperBound - from + shift) }
        return .found(TextSnippet(text: before + body.replacingNewlines() + after, matches: matches))
    }
}

private extension String {
    /// Line breaks as spaces (one byte for one byte, so the offsets hold).
    func replacingNewlines() -> String {
        String(decoding: utf8.map { $0 == 0x0A || $0 == 0x0D || $0 == 0x09 ? 0x20 : $0 }, as: UTF8.self)
    }
}
