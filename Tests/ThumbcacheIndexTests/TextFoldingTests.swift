import Foundation
import Testing
@testable import ThumbcacheIndex

/// The index folds values by ICU, loaded when first needed; it folded them by Foundation's
/// `folding(options:locale:)` and NFC before the programs stopped linking corelibs Foundation, and
/// indexes written then must still match their queries.
struct TextFoldingTests {
    static func foundation(_ text: String, case foldCase: Bool, diacritics: Bool) -> String {
        var options: String.CompareOptions = []
        if foldCase { options.insert(.caseInsensitive) }
        if diacritics { options.insert(.diacriticInsensitive) }
        return text.folding(options: options, locale: nil).precomposedStringWithCanonicalMapping
    }

    /// Every letter, mark and digit of the Basic Multilingual Plane and of the scripts beyond it
    /// that have case, each way of folding, against Foundation's.
    @Test(arguments: [(true, true), (true, false), (false, true)])
    func everyScalarFoldsAsFoundationFolded(foldCase: Bool, diacritics: Bool) {
        var differing: [String] = []
        let ranges: [ClosedRange<UInt32>] = [0x80...0xD7FF, 0xE000...0xFFFD, 0x10400...0x1044F, 0x1D400...0x1D7FF, 0x1E900...0x1E95F]
        for range in ranges {
            for value in range {
                guard let scalar = Unicode.Scalar(value), scalar.properties.generalCategory != .unassigned else { continue }
                let text = "a" + String(Character(scalar)) + "z"
                let ours = TextFolding.fold(text, case: foldCase, diacritics: diacritics)
                if ours != Self.foundation(text, case: foldCase, diacritics: diacritics) {
                    differing.append(String(value, radix: 16) + ":" + ours.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ",") + "/" + Self.foundation(text, case: foldCase, diacritics: diacritics).unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ","))
                }
            }
        }
        #expect(differing.isEmpty, "\(differing.count) scalars fold otherwise: \(differing)")
    }

    @Test func wordsAndSentences() {
        for text in ["क़लम", "أحمد إبراهيم آمنة", "ᾈδης", "ᏣᎳᎩ ꮳꮃꭹ", "Ǌ ǋ ǌ", "e\u{301}\u{302}x", "\u{301}start", "ञ्", "한국어", "Ångström", "ÉCOLE élève", "Straße", "İstanbul ıi", "Ελληνικά ΣΊΣΥΦΟΣ", "Ǆemal", "ﬁnal", "Ｆｕｌｌ", "naïve café", "Пётр"] {
            for (c, d) in [(true, true), (true, false), (false, true)] {
                #expect(TextFolding.fold(text, case: c, diacritics: d) == Self.foundation(text, case: c, diacritics: d), "\(text) \(c) \(d)")
            }
        }
    }
}
