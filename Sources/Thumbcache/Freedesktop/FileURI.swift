/// `file://` URIs as GLib writes them (`g_filename_to_uri`): the freedesktop thumbnail name is the
/// MD5 of this exact string, so one escaped byte more or less and no file manager finds it.
public enum FileURI {
    /// The URI of an absolute path: bytes outside GLib's set for paths are %-escaped, in upper-case hex.
    public static func of(path: String) -> String {
        var uri = "file://"
        for byte in path.utf8 {
            if byte < 128 && allowed[Int(byte)] {
                uri.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                uri += "%" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 15)])
            }
        }
        return uri
    }

    /// The path of a `file://` URI (%-escapes undone), or nil if it is not a local file's URI.
    public static func path(of uri: String) -> String? {
        guard uri.hasPrefix("file:///") else { return nil }
        var bytes: [UInt8] = []
        var rest = Array(uri.utf8.dropFirst(7))[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard rest.count >= 2, let high = hexValue(rest.removeFirst()), let low = hexValue(rest.removeFirst()) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self) ?? String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF")

    /// GLib's "unsafe path" table: letters, digits, `-_.!~*'()` and `/&=:@+$,` pass unescaped.
    private static let allowed: [Bool] = (0..<128).map { code in
        let c = Character(Unicode.Scalar(UInt8(code)))
        return c.isASCII && (c.isLetter || c.isNumber) || "-_.!~*'()/&=:@+$,".contains(c)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
