import CThumbcacheWords
#if canImport(Glibc)
import Glibc
#endif

/// Case and diacritic folding, words and trigrams: how text becomes index terms.
///
/// Terms are always folded both ways; a query that keeps case or diacritics (no `c` or `d`
/// modifier) finds candidates through the folded terms and then compares the real values.
enum TextFolding {
    /// `text` without case and/or diacritic distinctions. ASCII takes a fast path.
    static func fold(_ text: String, case foldCase: Bool = true, diacritics foldDiacritics: Bool = true) -> String {
        if !foldCase && !foldDiacritics { return text }
        var ascii = true
        for b in text.utf8 where b >= 0x80 { ascii = false; break }
        if ascii {
            guard foldCase else { return text }
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        return unicodeFold(text, case: foldCase, diacritics: foldDiacritics)
    }

    /// ICU's case folding and canonical forms, loaded at the first text that needs them (as the
    /// full-text words are); they fold as Foundation's `folding(options:locale:)` followed by
    /// NFC did (`TextFoldingTests` compares them scalar by scalar). Without ICU, case alone, by
    /// the standard library's lowercasing.
    private static func unicodeFold(_ text: String, case foldCase: Bool, diacritics foldDiacritics: Bool) -> String {
        var text = text
        let folded: String? = text.withUTF8 { bytes in
            var length: Int64 = 0
            guard let base = bytes.baseAddress,
                  let out = base.withMemoryRebound(to: CChar.self, capacity: bytes.count, {
                      tc_text_fold($0, Int64(bytes.count), foldCase ? 1 : 0, foldDiacritics ? 1 : 0, &length)
                  }) else { return nil }
            defer { free(out) }
            return out.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self)
            }
        }
        return folded ?? (foldCase ? text.lowercased() : text)
    }

    /// The folded words of `text`: runs of letters and digits.
    static func words(_ text: String) -> [String] {
        var result: [String] = []
        var ascii = true
        for b in text.utf8 where b >= 0x80 { ascii = false; break }
        if ascii {
            var current: [UInt8] = []
            for b in text.utf8 {
                if (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7A) {
                    current.append(b)
                } else if b >= 0x41 && b <= 0x5A {
                    current.append(b | 0x20)
                } else if !current.isEmpty {
                    result.append(String(decoding: current, as: UTF8.self))
                    current.removeAll(keepingCapacity: true)
                }
            }
            if !current.isEmpty { result.append(String(decoding: current, as: UTF8.self)) }
            return result
        }
        var current = ""
        for scalar in fold(text).unicodeScalars {
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                result.append(current)
                current = ""
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    /// Pads marking the start and the end of a value in trigrams, so that names shorter than three
    /// characters have trigrams and anchored patterns (`holi*`) use their anchor.
    static let startPad: Unicode.Scalar = "\u{1}"
    static let endPad: Unicode.Scalar = "\u{2}"

    /// The distinct trigrams of a folded value, with the pads, as UTF-8 terms.
    static func trigrams(ofFolded folded: String) -> [[UInt8]] {
        trigrams(of: [startPad] + Array(folded.unicodeScalars) + [endPad])
    }

    /// The trigrams of a run of scalars (no pads added).
    static func trigrams(of scalars: [Unicode.Scalar]) -> [[UInt8]] {
        guard scalars.count >= 3 else { return [] }
        var seen = Set<[UInt8]>()
        var result: [[UInt8]] = []
        result.reserveCapacity(scalars.count - 2)
        for i in 0...(scalars.count - 3) {
            var term: [UInt8] = []
            for s in scalars[i..<i + 3] { UTF8.encode(s) { term.append($0) } }
            if seen.insert(term).inserted { result.append(term) }
        }
        return result
    }

    /// The fully folded UTF-8 bytes of `text` (ASCII lowercased in place, others through ``fold(_:case:diacritics:)``).
    static func foldedBytes(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for b in text.utf8 {
            if b >= 0x80 { return Array(fold(text).utf8) }
            out.append(b >= 0x41 && b <= 0x5A ? b | 0x20 : b)
        }
        return out
    }

    /// Folds `text` into `out` (replacing its contents) as ``foldedBytes(_:)`` does, without
    /// allocating for ASCII text; true if folding changed the bytes.
    @discardableResult
    static func fold(_ text: String, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        var changed = false
        // Read in place (a `var` copy for `withUTF8` cost a retain and a release per value).
        func lowercase(_ bytes: some Sequence<UInt8>) -> Bool {
            for b in bytes {
                if b >= 0x80 { return false }
                if b >= 0x41 && b <= 0x5A { out.append(b | 0x20); changed = true } else { out.append(b) }
            }
            return true
        }
        let ascii = text.utf8.withContiguousStorageIfAvailable { lowercase($0) } ?? lowercase(text.utf8)
        if ascii { return changed }
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: fold(text).utf8)
        return !out.elementsEqual(text.utf8)
    }

    @inline(__always) static func isASCIIWordByte(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7A) }

    /// Calls `body` with the bytes of each folded word of `text` (whose folded bytes are `folded`).
    static func forEachWord(_ text: String, folded: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard !folded.contains(where: { $0 >= 0x80 }) else {
            for w in words(text) { Array(w.utf8).withUnsafeBufferPointer(body) }
            return
        }
        folded.withUnsafeBufferPointer { folded in
            var start = 0
            while start < folded.count {
                while start < folded.count && !isASCIIWordByte(folded[start]) { start += 1 }
                var end = start
                while end < folded.count && isASCIIWordByte(folded[end]) { end += 1 }
                if end > start { body(UnsafeBufferPointer(rebasing: folded[start..<end])) }
                start = end
            }
        }
    }

    /// Calls `body` with each trigram of the padded folded ASCII value (repeats possible), without
    /// allocating: the bulk-indexing path. ``trigrams(ofFolded:)`` is the general form.
    @inline(__always)
    static func forEachASCIITrigram(_ folded: [UInt8], _ body: (UInt8, UInt8, UInt8) -> Void) {
        guard !folded.isEmpty else { return }  // "\1\2": fewer than three characters
        var a: UInt8 = 1, b = folded[0]
        for c in folded.dropFirst() {
            body(a, b, c)
            (a, b) = (b, c)
        }
        body(a, b, 2)
    }

    /// The term of an exact value: folded · 0x01 · as written, each part cut to 112 bytes.
    static func exactTerm(folded: [UInt8], raw: String) -> [UInt8] {
        var term = Array(folded.lazy.filter { $0 > 1 }.prefix(112))
        term.append(1)
        term.append(contentsOf: raw.utf8.lazy.filter { $0 > 1 }.prefix(112))
        return term
    }

    /// Index terms are at most this many bytes; longer values are cut (at a character boundary)
    /// and every match on them is checked against the item.
    static let maxTermBytes = 240

    /// `folded` as a term: UTF-8, NULs removed, cut to ``maxTermBytes``. `truncated` if cut.
    static func term(_ folded: String) -> (bytes: [UInt8], truncated: Bool) {
        var bytes = Array(folded.utf8.lazy.filter { $0 != 0 })
        guard bytes.count > maxTermBytes else { return (bytes, false) }
        var end = maxTermBytes
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }  // not inside a UTF-8 sequence
        bytes.removeSubrange(end...)
        return (bytes, true)
    }
}
