/// How a text file's bytes become text: one decoder for the text pages and the full-text index.
package enum Charset {
    /// Windows-1252 to Unicode, the 8-bit code page text on Linux is in when it is not UTF-8 as a
    /// rule: Latin-1 but for 0x80–0x9F, where it has typographic marks.
    package static let windows1252: [UInt32] = (0..<256).map { b in
        let high: [UInt32] = [0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,
                              0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161,
                              0x203A, 0x0153, 0x9D, 0x017E, 0x0178]
        return (0x80..<0xA0).contains(b) ? high[b - 0x80] : UInt32(b)
    }

    /// Hands `body` each scalar of `bytes` (a file's start) as text, in the encoding a byte-order
    /// mark says (UTF-8, UTF-16), else UTF-8 when the bytes are valid UTF-8, else Windows-1252,
    /// while `body` returns true. False if `body` returned nil (it saw binary data), else true. A
    /// character the read cut at the end is left out; one broken inside UTF-16 comes as U+FFFD.
    @discardableResult
    package static func forEachScalar(_ bytes: UnsafeRawBufferPointer, _ body: (UInt32) -> Bool?) -> Bool {
        func decode<C: UnicodeCodec>(_ codec: C.Type, _ units: some Sequence<C.CodeUnit>, cutAtEnd: Bool) -> Bool {
            var decoder = C()
            var it = units.makeIterator()
            while true {
                let scalar: UInt32
                switch decoder.decode(&it) {
                case .scalarValue(let s): scalar = s.value
                case .emptyInput: return true
                case .error:
                    // Valid UTF-8 has an error only where the read cut a character: the text ends there.
                    if cutAtEnd { return true }
                    scalar = 0xFFFD
                }
                guard let more = body(scalar) else { return false }
                if !more { return true }
            }
        }
        if bytes.count >= 2, bytes[0] == 0xFF && bytes[1] == 0xFE || bytes[0] == 0xFE && bytes[1] == 0xFF {
            let little = bytes[0] == 0xFF
            let units = stride(from: 2, to: bytes.count - 1, by: 2).lazy.map { i -> UInt16 in
                little ? UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8 : UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
            }
            return decode(UTF16.self, units, cutAtEnd: false)
        }
        if TextSniffer.isUTF8(bytes) { return decode(UTF8.self, bytes, cutAtEnd: true) }
        for b in bytes {
            guard let more = body(windows1252[Int(b)]) else { return false }
            if !more { break }
        }
        return true
    }

    /// The whole text of `bytes` (see ``forEachScalar(_:_:)``) without a leading byte-order mark;
    /// nil for bytes with a NUL, which text never has (binary data).
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> String? {
        var text = String.UnicodeScalarView()
        let isText = forEachScalar(bytes) { c in
            guard c != 0 else { return nil }
            if c != 0xFEFF || !text.isEmpty { text.append(Unicode.Scalar(c) ?? "\u{FFFD}") }
            return true
        }
        return isText ? String(text) : nil
    }
}
