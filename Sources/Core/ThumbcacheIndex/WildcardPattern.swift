/// A string pattern of the query language: `*` any run of characters, `?` one character,
/// `\*` and `\?` themselves; compared with or without case and diacritics, whole or per word.
struct WildcardPattern: Sendable, Hashable {
    enum Piece: Sendable, Hashable {
        case literal(String)
        case any  // *
        case one  // ?
    }

    let source: String
    let pieces: [Piece]
    let ignoresCase: Bool
    let ignoresDiacritics: Bool
    let wordBased: Bool
    /// The pattern as bytes for ASCII values; nil if the pattern is not ASCII.
    private let asciiTokens: [Int16]?

    init(_ source: String, ignoresCase: Bool = false, ignoresDiacritics: Bool = false, wordBased: Bool = false) {
        self.source = source
        self.ignoresCase = ignoresCase
        self.ignoresDiacritics = ignoresDiacritics
        self.wordBased = wordBased
        var pieces: [Piece] = []
        var literal = ""
        var escaped = false
        for ch in source {
            if escaped { literal.append(ch); escaped = false; continue }
            switch ch {
            case "\\": escaped = true
            case "*", "?":
                if !literal.isEmpty { pieces.append(.literal(literal)); literal = "" }
                if ch == "?" { pieces.append(.one) } else if pieces.last != .any { pieces.append(.any) }
            default: literal.append(ch)
            }
        }
        if escaped { literal.append("\\") }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
        asciiTokens = Self.asciiTokens(pieces, ignoresCase: ignoresCase)
    }

    var hasWildcards: Bool { pieces.contains { $0 == .any || $0 == .one } }

    /// The text of a pattern with no wildcards.
    var literalText: String? {
        if pieces.isEmpty { return "" }
        if pieces.count == 1, case .literal(let s) = pieces[0] { return s }
        return nil
    }

    /// The literal text before the first wildcard ("" if the pattern starts with one).
    var prefix: String {
        guard case .literal(let s)? = pieces.first else { return "" }
        return s
    }

    /// True if the pattern is `literal*`.
    var isPrefixPattern: Bool {
        pieces.count == 2 && pieces[1] == .any && { if case .literal = pieces[0] { return true } else { return false } }()
    }

    /// True if nothing but case/diacritic folding is needed to decide a match on folded terms.
    var matchesFoldedTermsExactly: Bool { ignoresCase && ignoresDiacritics }

    /// Folds a value the way this pattern compares.
    func foldValue(_ s: String) -> String { TextFolding.fold(s, case: ignoresCase, diacritics: ignoresDiacritics) }

    /// The pattern's pieces folded for comparison against fully folded terms.
    var foldedPieces: [Piece] {
        pieces.map { if case .literal(let s) = $0 { .literal(TextFolding.fold(s)) } else { $0 } }
    }

    private var comparedPieces: [Piece] {
        pieces.map { if case .literal(let s) = $0 { .literal(foldValue(s)) } else { $0 } }
    }

    /// Does `value` match (whole value, or any word of it when word-based)?
    func matches(_ value: String) -> Bool {
        if let ascii = asciiTokens, value.utf8.allSatisfy({ $0 < 0x80 }) {
            var copy = value
            return copy.withUTF8 { matchesASCII(ascii, UnsafeRawBufferPointer($0)) }
        }
        let compared = comparedPieces
        if wordBased {
            return Self.words(foldValue(value)).contains { Self.match(compared, Array($0)) }
        }
        return Self.match(compared, Array(foldValue(value)))
    }

    /// Does the UTF-8 `value` match? Matches ASCII values in place, without making a String.
    func matches(utf8 value: UnsafeRawBufferPointer) -> Bool {
        if let ascii = asciiTokens, !value.contains(where: { $0 >= 0x80 }) {
            return matchesASCII(ascii, value)
        }
        return matches(String(decoding: value, as: UTF8.self))
    }

    /// Does an already fully folded term match the folded pattern (used on term dictionaries)?
    func matchesFoldedTerm(_ term: String) -> Bool {
        Self.match(foldedPieces, Array(term))
    }

    /// The pattern as bytes (lowercased when ignoring case), `star` and `one` for wildcards;
    /// nil if the pattern is not ASCII.
    private static func asciiTokens(_ pieces: [Piece], ignoresCase: Bool) -> [Int16]? {
        var tokens: [Int16] = []
        for piece in pieces {
            switch piece {
            case .any: tokens.append(star)
            case .one: tokens.append(one)
            case .literal(let s):
                for b in s.utf8 {
                    guard b < 0x80 else { return nil }
                    tokens.append(Int16(ignoresCase ? lower(b) : b))
                }
            }
        }
        return tokens
    }

    private static let star: Int16 = -1
    private static let one: Int16 = -2

    @inline(__always) private static func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }
    @inline(__always) private static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    private func matchesASCII(_ tokens: [Int16], _ text: UnsafeRawBufferPointer) -> Bool {
        guard wordBased else { return Self.globASCII(tokens, text, ignoresCase: ignoresCase) }
        var start = 0
        while start < text.count {
            while start < text.count && !Self.isWordByte(text[start]) { start += 1 }
            var end = start
            while end < text.count && Self.isWordByte(text[end]) { end += 1 }
            if end > start && Self.globASCII(tokens, UnsafeRawBufferPointer(rebasing: text[start..<end]), ignoresCase: ignoresCase) {
                return true
            }
            start = end
        }
        return false
    }

    /// Glob match on bytes, backtracking to the last `*`.
    private static func globASCII(_ tokens: [Int16], _ text: UnsafeRawBufferPointer, ignoresCase: Bool) -> Bool {
        var p = 0, t = 0
        var starP = -1, starT = 0
        while t < text.count {
            let c = Int16(ignoresCase ? lower(text[t]) : text[t])
            if p < tokens.count && (tokens[p] == c || tokens[p] == one) {
                p += 1; t += 1
            } else if p < tokens.count && tokens[p] == star {
                starP = p; starT = t; p += 1
            } else if starP >= 0 {
                p = starP + 1; starT += 1; t = starT
            } else {
                return false
            }
        }
        while p < tokens.count && tokens[p] == star { p += 1 }
        return p == tokens.count
    }

    /// Words for the `w` modifier: runs of letters and digits, case kept.
    private static func words(_ s: String) -> [String] {
        s.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init)
    }

    /// Glob match over characters, backtracking to the last `*`.
    static func match(_ pieces: [Piece], _ chars: [Character]) -> Bool {
        var flat: [Character?] = []  // nil: a wildcard, told apart by isStar
        var isStar: [Bool] = []
        for piece in pieces {
            switch piece {
            case .literal(let s): for c in s { flat.append(c); isStar.append(false) }
            case .one: flat.append(nil); isStar.append(false)
            case .any: flat.append(nil); isStar.append(true)
            }
        }
        var p = 0, t = 0
        var starP = -1, starT = 0
        while t < chars.count {
            if p < flat.count && !isStar[p] && (flat[p] == nil || flat[p] == chars[t]) {
                p += 1; t += 1
            } else if p < flat.count && isStar[p] {
                starP = p; starT = t; p += 1
            } else if starP >= 0 {
                p = starP + 1; starT += 1; t = starT
            } else {
                return false
            }
        }
        while p < flat.count && isStar[p] { p += 1 }
        return p == flat.count
    }

    /// Trigram terms every folded value matching this pattern must contain (empty: none known).
    /// Word-based patterns give none: their pieces may match inside any word.
    func requiredTrigrams() -> [[UInt8]] {
        guard !wordBased else { return [] }
        var result: [[UInt8]] = []
        var run: [Unicode.Scalar] = [TextFolding.startPad]
        for piece in foldedPieces {
            switch piece {
            case .literal(let s): run.append(contentsOf: s.unicodeScalars)
            case .any, .one:
                result.append(contentsOf: TextFolding.trigrams(of: run))
                run = []
            }
        }
        run.append(TextFolding.endPad)
        result.append(contentsOf: TextFolding.trigrams(of: run))
        var seen = Set<[UInt8]>()
        return result.filter { seen.insert($0).inserted }
    }
}
