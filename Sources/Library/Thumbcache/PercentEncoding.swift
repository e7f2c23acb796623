/// `%XX` escapes, for the freedesktop `file://` URIs and the server's query strings alike: which
/// bytes pass unescaped is the caller's rule, the escaping and its undoing are one.
package enum PercentEncoding {
    /// `text` with every byte that `keeps` refuses written as `%XX` (upper-case hex).
    package static func encode(_ text: some StringProtocol, keeping keeps: (UInt8) -> Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keeps(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 15)])
            }
        }
        return out
    }

    /// The bytes of `text` with `%XX` undone (and `+` as a space, for form fields); nil if an
    /// escape is broken.
    package static func decode(_ text: some StringProtocol, plusIsSpace: Bool = false) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            switch byte {
            case UInt8(ascii: "%"):
                guard rest.count >= 2, let high = hexValue(rest.removeFirst()), let low = hexValue(rest.removeFirst()) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return bytes
    }

    private static let hexDigits = Array("0123456789ABCDEF")

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
