/// The one shape of request ``HitFront`` answers, read from bytes: `GET` and a target,
/// `HTTP/1.1`, CR LF line ends, header names that are tokens, and no header that frames a body,
/// closes or upgrades the connection or asks a condition. Anything else is `.other`, for the HTTP
/// server's own parser to judge.
enum RawRequest: Equatable {
    case incomplete
    case other
    /// A request whose head is `length` bytes.
    case get(length: Int, Head)

    struct Head: Equatable {
        var target: String
        var host: String?
        var authorization: String?
        var cookies: [String] = []
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) -> RawRequest {
        let method: [UInt8] = [0x47, 0x45, 0x54, 0x20]  // "GET "
        for i in 0..<min(4, bytes.count) where bytes[i] != method[i] { return .other }
        let first = lineEnd(bytes, from: 0)
        guard case .found(let firstLine) = first else { return first == .malformed ? .other : .incomplete }
        let version = " HTTP/1.1".utf8
        guard firstLine - 4 > version.count, bytes[(firstLine - version.count)..<firstLine].elementsEqual(version) else { return .other }
        let targetBytes = bytes[4..<(firstLine - version.count)]
        // Visible ASCII only: no spaces, controls or bytes another parser might read another way.
        guard targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .other }
        var head = Head(target: String(decoding: UnsafeRawBufferPointer(rebasing: targetBytes), as: UTF8.self))
        var start = firstLine + 2
        while true {
            let line = lineEnd(bytes, from: start)
            guard case .found(let end) = line else { return line == .malformed ? .other : .incomplete }
            if end == start { return .get(length: end + 2, head) }
            guard let colon = bytes[start..<end].firstIndex(of: UInt8(ascii: ":")), colon > start,
                  bytes[start..<colon].allSatisfy(isTokenByte),
                  bytes[(colon + 1)..<end].allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
            else { return .other }
            let name = bytes[start..<colon], value = bytes[(colon + 1)..<end]
            if named(name, "host") {
                guard head.host == nil else { return .other }
                head.host = trimmed(value)
            } else if named(name, "authorization") {
                guard head.authorization == nil else { return .other }
                head.authorization = trimmed(value)
            } else if named(name, "cookie") {
                head.cookies.append(trimmed(value))
            } else if named(name, "connection") {
                guard trimmed(value).lowercased() == "keep-alive" else { return .other }
            } else if refused.contains(where: { named(name, $0) }) {
                return .other
            }
            start = end + 2
        }
    }

    /// Headers that frame a body, end or upgrade the connection, or make the answer conditional.
    private static let refused = ["content-length", "transfer-encoding", "upgrade", "expect", "if-none-match", "if-match",
                                  "if-modified-since", "if-unmodified-since", "range", "if-range", "te", "trailer"]

    private enum LineEnd: Equatable {
        /// The index of the line's CR.
        case found(Int)
        case notYet
        /// A CR without its LF or an LF without its CR.
        case malformed
    }

    private static func lineEnd(_ bytes: UnsafeRawBufferPointer, from: Int) -> LineEnd {
        var i = from
        while i < bytes.count {
            switch bytes[i] {
            case 10: return .malformed
            case 13:
                guard i + 1 < bytes.count else { return .notYet }
                return bytes[i + 1] == 10 ? .found(i) : .malformed
            default: i += 1
            }
        }
        return .notYet
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
             UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "^"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Whether a header's name is `lowercase`, read without case (ASCII).
    private static func named(_ name: Slice<UnsafeRawBufferPointer>, _ lowercase: String) -> Bool {
        name.count == lowercase.utf8.count && zip(name, lowercase.utf8).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
    }

    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        var s = bytes.startIndex, e = bytes.endIndex
        while s < e, bytes[s] == 0x20 || bytes[s] == 0x09 { s += 1 }
        while e > s, bytes[e - 1] == 0x20 || bytes[e - 1] == 0x09 { e -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes.base[s..<e]), as: UTF8.self)
    }
}
