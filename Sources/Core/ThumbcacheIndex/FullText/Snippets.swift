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

    /// The passage of `document`'s text with the most distinct query words in
    /// ``snippetWords`` words (the first such), and where they are.
    func snippet(_ document: UInt32, _ queries: [FullTextQuery], _ txn: borrowing Transaction) throws -> TextSnippet? {
        guard let stored = try documentText(document, txn), !queries.isEmpty else { return nil }
        return stored.withUnsafeBytes { snippet(of: $0, queries) }
    }

    private func snippet(of text: UnsafeRawBufferPointer, _ queries: [FullTextQuery]) -> TextSnippet? {
        var words: [(range: Range<Int>, matched: Int?)] = []
        let wanted = queries.flatMap { q in q.words.enumerated().map { (word: $0.element, prefix: q.lastIsPrefix && $0.offset == q.words.count - 1) } }
        WordBreaker().forEachWord(in: text) { word, range in
            let hit = wanted.firstIndex { $0.prefix ? word.starts(with: $0.word) : word.elementsEqual($0.word) }
            words.append((range, hit))
        }
        guard let firstHit = words.firstIndex(where: { $0.matched != nil }) else { return nil }
        // The window with the most distinct query words.
        var best = (start: firstHit, distinct: 0)
        var i = firstHit
        while i < words.count {
            if words[i].matched != nil {
                let window = words[i..<min(words.count, i + Self.snippetWords)]
                let distinct = Set(window.compactMap(\.matched)).count
                if distinct > best.distinct { best = (i, distinct) }
                if distinct == wanted.count { break }
            }
            i += 1
        }
        let lead = max(0, best.start - 4)
        var from = words[lead].range.lowerBound
        var to = words[min(words.count - 1, best.start + Self.snippetWords - 1)].range.upperBound
        if to - from > Self.snippetBytes { to = max(words[best.start].range.upperBound, from + Self.snippetBytes) }
        if to - from > Self.snippetBytes { from = words[best.start].range.lowerBound }
        while from > 0, from < text.count, text[from] & 0xC0 == 0x80 { from -= 1 }
        while to < text.count, text[to] & 0xC0 == 0x80 { to += 1 }
        // An ellipsis only where words were cut off, not mere space.
        let before = text[..<from].contains { !WordBreaker.isASCIISpace($0) } ? "…" : ""
        let after = text[to...].contains { !WordBreaker.isASCIISpace($0) } ? "…" : ""
        let shift = before.utf8.count
        let body = String(decoding: UnsafeRawBufferPointer(rebasing: text[from..<to]), as: UTF8.self)
        let matches = words.filter { $0.matched != nil && $0.range.lowerBound >= from && $0.range.upperBound <= to }
            .map { ($0.range.lowerBound - from + shift)..<($0.range.upperBound - from + shift) }
        return TextSnippet(text: before + body.replacingNewlines() + after, matches: matches)
    }
}

private extension String {
    /// Line breaks as spaces (one byte for one byte, so the offsets hold).
    func replacingNewlines() -> String {
        String(decoding: utf8.map { $0 == 0x0A || $0 == 0x0D || $0 == 0x09 ? 0x20 : $0 }, as: UTF8.self)
    }
}
