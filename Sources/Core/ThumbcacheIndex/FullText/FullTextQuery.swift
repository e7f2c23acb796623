
/// A full-text predicate: its words must stand in the document in this order, next to each
/// other (one word: anywhere); the last may be a prefix (`photosynth*`).
struct FullTextQuery: Sendable, Hashable {
    /// The folded words.
    var words: [[UInt8]]
    /// The words as written, for a query that keeps case or diacritics.
    var written: [String]
    var lastIsPrefix: Bool
    var ignoresCase: Bool
    var ignoresDiacritics: Bool

    /// The words of `text`; a `*` at its end makes the last a prefix. Nil if `text` has no word.
    init?(_ text: String, ignoresCase: Bool = true, ignoresDiacritics: Bool = true) {
        var body = Substring(text)
        while body.last == " " || body.last == "\t" { body.removeLast() }
        lastIsPrefix = body.hasSuffix("*")
        if lastIsPrefix { body.removeLast() }
        let breaker = WordBreaker()
        var folded: [[UInt8]] = []
        var written: [String] = []
        var copy = body
        copy.withUTF8 { utf8 in
            breaker.forEachWord(in: UnsafeRawBufferPointer(utf8)) { word, range in
                folded.append(Array(word))
                written.append(String(decoding: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[range]), as: UTF8.self))
            }
        }
        guard !folded.isEmpty else { return nil }
        words = folded
        self.written = written
        self.ignoresCase = ignoresCase
        self.ignoresDiacritics = ignoresDiacritics
        if lastIsPrefix, let last = body.unicodeScalars.last,
           last.isASCII ? !WordBreaker.isASCIIWordByte(UInt8(last.value)) : !last.properties.isAlphabetic && last.properties.numericType == nil {
            lastIsPrefix = false  // "word.*": the star follows punctuation, not a word
        }
    }

    /// Whether case and diacritics are folded as the index folds them: then the postings decide alone.
    var matchesFoldedTerms: Bool { ignoresCase && ignoresDiacritics }

    /// Whether the word `raw`, as written in a document, is the query's word `i` under its modifiers.
    func spelledAlike(_ raw: String, _ i: Int) -> Bool {
        let a = TextFolding.fold(raw, case: ignoresCase, diacritics: ignoresDiacritics)
        let b = TextFolding.fold(written[i], case: ignoresCase, diacritics: ignoresDiacritics)
        return lastIsPrefix && i == written.count - 1 ? a.hasPrefix(b) : a == b
    }
}
