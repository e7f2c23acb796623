import Thumbcache

/// The fields of a query string or an `application/x-www-form-urlencoded` body, decoded strictly:
/// `+` is a space, `%XX` a byte, and the bytes must be UTF-8 (else the request is refused rather
/// than guessed at).
struct FormFields: Sendable {
    private(set) var pairs: [(name: String, value: String)] = []

    /// The longest query or form body read.
    static let maximumBytes = 16 * 1024

    init(_ encoded: Substring?) throws(ServeError) {
        guard let encoded, !encoded.isEmpty else { return }
        guard encoded.utf8.count <= Self.maximumBytes else { throw ServeError(.uriTooLong, "the query is longer than \(Self.maximumBytes) bytes") }
        // Split as bytes: `&` and `=` are ASCII, and a `Substring`'s split walks grapheme clusters,
        // which every thumbnail request paid for.
        for field in encoded.utf8.split(separator: UInt8(ascii: "&")) {
            let equals = field.firstIndex(of: UInt8(ascii: "=")) ?? field.endIndex
            let value = equals == field.endIndex ? field[equals...] : field[field.index(after: equals)...]
            pairs.append((try Self.decode(Substring(field[..<equals])), try Self.decode(Substring(value))))
        }
    }

    subscript(name: String) -> String? { pairs.first { $0.name == name }?.value }

    func all(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

    /// An integer field within `range`, or `fallback` when absent.
    func integer(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws(ServeError) -> Int {
        guard let text = self[name] else { return fallback }
        guard let n = Int(text), range.contains(n) else {
            throw .badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    /// A number field within `range`, or `fallback` when absent.
    func number(_ name: String, default fallback: Double, in range: ClosedRange<Double>) throws(ServeError) -> Double {
        guard let text = self[name] else { return fallback }
        guard let n = Double(text), n.isFinite, range.contains(n) else {
            throw .badRequest("\(name) must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    static func decode(_ s: Substring) throws(ServeError) -> String {
        // Nothing escaped (the usual field): the text itself, without a round trip through bytes.
        guard s.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return String(s) }
        guard let bytes = PercentEncoding.decode(s, plusIsSpace: true) else { throw .badRequest("the query has a broken %-escape") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .badRequest("the query is not UTF-8") }
        return text
    }
}

/// Percent-encoding for a URL's query value: everything but RFC 3986's unreserved characters (and `/`).
enum URLText {
    static func query(_ s: String) -> String {
        PercentEncoding.encode(s) { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"): true
            default: false
            }
        }
    }
}
