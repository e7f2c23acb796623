/// `file://` URIs as GLib writes them (`g_filename_to_uri`): the freedesktop thumbnail name is the
/// MD5 of this exact string, so one escaped byte more or less and no file manager finds it.
package enum FileURI {
    /// The URI of an absolute path: bytes outside GLib's set for paths are %-escaped, in upper-case hex.
    package static func of(path: String) -> String {
        "file://" + PercentEncoding.encode(path) { $0 < 128 && allowed[Int($0)] }
    }

    /// The path of a `file://` URI (%-escapes undone), or nil if it is not a local file's URI.
    package static func path(of uri: String) -> String? {
        guard uri.hasPrefix("file:///"), let bytes = PercentEncoding.decode(uri.dropFirst(7)) else { return nil }
        return String(validating: bytes, as: UTF8.self) ?? String(decoding: bytes, as: UTF8.self)
    }

    /// GLib's "unsafe path" table: letters, digits, `-_.!~*'()` and `/&=:@+$,` pass unescaped.
    private static let allowed: [Bool] = (0..<128).map { code in
        let c = Character(Unicode.Scalar(UInt8(code)))
        return c.isASCII && (c.isLetter || c.isNumber) || "-_.!~*'()/&=:@+$,".contains(c)
    }
}
