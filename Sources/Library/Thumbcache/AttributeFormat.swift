import Foundation
import ThumbcacheIndex
import ThumbcacheStore

/// How attribute values print: mdls-like text, or JSON (`search`, `info` and `serve` alike).
package enum AttributeFormat {
    package static func date(_ seconds: Double) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date(timeIntervalSince1970: seconds))
    }

    package static func number(_ n: Double) -> String {
        n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
    }

    package static func text(_ v: AttributeValue) -> String {
        switch v {
        case .string(let s): return "\"\(s)\""
        case .strings(let list): return "(" + list.map { "\"\($0)\"" }.joined(separator: ", ") + ")"
        case .number(let n): return number(n)
        case .date(let d): return date(d)
        }
    }

    package static func jsonValue(_ v: AttributeValue) -> Any {
        switch v {
        case .string(let s): return s
        case .strings(let list): return list
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? Int64(n) as Any : n as Any
        case .date(let d): return date(d)
        }
    }

    package static func json(_ r: SearchResult) -> [String: Any] {
        var o: [String: Any] = ["attributes": r.attributes.mapValues(jsonValue)]
        if let p = r.path { o["path"] = p }
        if let i = r.identifier { o["identifier"] = i }
        if let d = r.domainIdentifier { o["domain"] = d }
        if let h = r.content { o["contentHash"] = h.hex }
        if let score = r.score { o["score"] = (score * 1000).rounded() / 1000 }
        if let snippet = r.snippet {
            // Offsets are UTF-8 bytes of the snippet's text, [start, end).
            o["snippet"] = ["text": snippet.text, "matches": snippet.matches.map { [$0.lowerBound, $0.upperBound] }] as [String: Any]
        }
        return o
    }

    package static func jsonText(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }
}

extension SearchResult {
    /// The indexed content hash as the store's type.
    package var content: ContentHash? { contentHash.flatMap { h in h.withUnsafeBytes { ContentHash(bytes: $0) } } }
}
