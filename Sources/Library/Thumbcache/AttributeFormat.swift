import Glibc
import ThumbcacheIndex
import ThumbcacheStore

/// How attribute values print: mdls-like text, or JSON (`search`, `info` and `serve` alike).
package enum AttributeFormat {
    /// `2024-05-01T12:30:00Z` (UTC, whole seconds), as ISO 8601's internet profile writes it;
    /// made here, not by a formatter, because a search may print one per result.
    package static func date(_ seconds: Double) -> String {
        var t = time_t(seconds.isFinite ? max(min(seconds, 253_402_300_799), -62_135_596_800).rounded(.down) : 0)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let year = Int(parts.tm_year) + 1900
        let y = String(year)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + "-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
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

    package static func write(_ v: AttributeValue, into json: inout JSONText) {
        switch v {
        case .string(let s): json.string(s)
        case .strings(let list): json.array { for s in list { $0.element { $0.string(s) } } }
        case .number(let n): json.number(n)
        case .date(let d): json.string(date(d))
        }
    }

    /// A search result or an item's attributes as `search --json`, `info --json` and `serve`
    /// write them, with `thumbnail` (a URL) when given; keys sorted.
    package static func write(_ r: SearchResult, thumbnail: String? = nil, into json: inout JSONText) {
        json.object { o in
            o.member("attributes") { a in
                a.object { m in
                    for (name, value) in r.attributes.sorted(by: { $0.key < $1.key }) { m.member(name) { write(value, into: &$0) } }
                }
            }
            if let h = r.content { o.member("contentHash", h.hex) }
            if let d = r.domainIdentifier { o.member("domain", d) }
            if let i = r.identifier { o.member("identifier", i) }
            if let p = r.path { o.member("path", p) }
            if let score = r.score { o.member("score", (score * 1000).rounded() / 1000) }
            if let snippet = r.snippet {
                // Offsets are UTF-8 bytes of the snippet's text, [start, end).
                o.member("snippet") { s in
                    s.object { m in
                        m.member("matches") { list in
                            list.array { for r in snippet.matches { $0.element { $0.array { $0.element { $0.number(Double(r.lowerBound)) }; $0.element { $0.number(Double(r.upperBound)) } } } } }
                        }
                        m.member("text", snippet.text)
                    }
                }
            }
            if let thumbnail { o.member("thumbnail", thumbnail) }
        }
    }
}

extension SearchResult {
    /// The indexed content hash as the store's type.
    package var content: ContentHash? { contentHash.flatMap { h in h.withUnsafeBytes { ContentHash(bytes: $0) } } }
}
