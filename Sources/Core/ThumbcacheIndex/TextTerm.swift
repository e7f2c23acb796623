/// A plain word or quoted phrase of a query, matched in the items' names and titles
/// (`Schema.textAttributes`; Docs/QUERY.md), folded once when the query is compiled rather
/// than for each item checked. A class: a plan's case is copied for each record checked.
final class TextTerm: Sendable {
    let source: String
    /// The folded words: each must start a word of the item's texts.
    let words: [String]
    /// The folded whole, which one of the texts must contain (unless it is the one word).
    let phrase: String
    private let wordBytes: [[UInt8]]
    private let phraseBytes: [UInt8]

    init(_ source: String) {
        self.source = source
        words = TextFolding.words(source)
        phrase = TextFolding.fold(source)
        wordBytes = words.map { Array($0.utf8) }
        phraseBytes = Array(phrase.utf8)
    }

    /// Whether the item's texts hold the term. ASCII texts are read in place; others are
    /// folded as strings, as ``TextFolding`` defines.
    func matches(_ view: RecordView) -> Bool {
        var phraseFound = words.count == 1 && words[0] == phrase
        // The words 64 at a time, a bit each (a term of more words reads the texts again).
        for first in stride(from: 0, to: max(words.count, 1), by: 64) {
            let chunk = first..<min(words.count, first + 64)
            var pending: UInt64 = chunk.count == 64 ? .max : (1 << UInt64(chunk.count)) - 1
            for info in Schema.textAttributes {
                var values = view.strings(info.id)
                while let value = values.next() {
                    if value.contains(where: { $0 >= 0x80 }) {
                        let text = String(decoding: value, as: UTF8.self)
                        for w in TextFolding.words(text) {
                            for k in chunk where pending & (1 << UInt64(k - first)) != 0 && w.hasPrefix(words[k]) { pending &= ~(1 << UInt64(k - first)) }
                        }
                        if !phraseFound { phraseFound = TextFolding.fold(text).contains(phrase) }
                    } else {
                        markASCIIWords(value, chunk, &pending)
                        if !phraseFound { phraseFound = Self.containsFolded(value, phraseBytes) }
                    }
                }
            }
            if pending != 0 { return false }
        }
        return phraseFound
    }

    /// Clears the bits (bit 0: the chunk's first) of the query words in `chunk` that start a
    /// word (a run of ASCII letters and digits, lowercased) of `value`.
    private func markASCIIWords(_ value: UnsafeRawBufferPointer, _ chunk: Range<Int>, _ pending: inout UInt64) {
        var i = 0
        while i < value.count, pending != 0 {
            guard Self.isWordByte(value[i]) else { i += 1; continue }
            var j = i
            while j < value.count, Self.isWordByte(value[j]) { j += 1 }
            for k in chunk where pending & (1 << UInt64(k - chunk.lowerBound)) != 0 && wordBytes[k].count <= j - i {
                let q = wordBytes[k]
                if q.indices.allSatisfy({ q[$0] == Self.lower(value[i + $0]) }) { pending &= ~(1 << UInt64(k - chunk.lowerBound)) }
            }
            i = j
        }
    }

    /// Whether ASCII `value`, lowercased, contains `needle`.
    private static func containsFolded(_ value: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard needle.count <= value.count else { return false }
        if needle.isEmpty { return true }
        for start in 0...(value.count - needle.count) where needle.indices.allSatisfy({ needle[$0] == lower(value[start + $0]) }) {
            return true
        }
        return false
    }

    @inline(__always) private static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A)
    }

    @inline(__always) private static func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }
}
