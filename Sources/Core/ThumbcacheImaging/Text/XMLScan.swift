/// Just enough XML for a document's metadata and an e-book's manifest: start tags by local name
/// (any namespace prefix), their attributes, and the text up to the next tag. Not a validating
/// parser: what it cannot read it skips, so a malformed file yields less, never an error.
package struct XMLScan {
    package struct Element {
        package var name: String
        package var attributes: [String: String]
        package var text: String
    }

    package let elements: [Element]

    /// Scans at most `limit` elements of `text`.
    package init(_ text: String, limit: Int = 100_000) {
        var out: [Element] = []
        Self.tags(in: text) { tag, following in
            // Declarations, processing instructions and end tags carry nothing here.
            guard let first = tag.first, first != "/", first != "!", first != "?" else { return true }
            let nameEnd = tag.firstIndex(where: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "/" }) ?? tag.endIndex
            out.append(Element(name: Self.local(tag[..<nameEnd]), attributes: Self.attributes(tag[nameEnd...]),
                               text: Self.unescape(following).trimming(" \t\r\n")))
            return out.count < limit
        }
        elements = out
    }

    /// Calls `body` with each tag of `text` (what is between `<` and `>`) and the character data
    /// that follows it up to the next tag, in order, comments left out, while `body` returns true.
    package static func tags(in text: String, _ body: (_ tag: Substring, _ following: Substring) -> Bool) {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            if rest.hasPrefix("!--") {
                guard let end = rest.firstRange(of: "-->") else { return }
                rest = rest[end.upperBound...]
                continue
            }
            guard let close = rest.firstIndex(of: ">") else { return }
            let tag = rest[..<close]
            rest = rest[rest.index(after: close)...]
            guard body(tag, rest[..<(rest.firstIndex(of: "<") ?? rest.endIndex)]) else { return }
        }
    }

    /// Every element whose local name is `name`.
    package func all(_ name: String) -> [Element] { elements.filter { $0.name == name } }

    /// The text of the first element named `name` that has any.
    package func text(_ name: String) -> String? { elements.first { $0.name == name && !$0.text.isEmpty }?.text }

    private static func local(_ qualified: Substring) -> String {
        String(qualified.split(separator: ":").last ?? qualified)
    }

    private static func attributes(_ s: Substring) -> [String: String] {
        var out: [String: String] = [:]
        var rest = s
        while let eq = rest.firstIndex(of: "=") {
            let key = local(Substring(rest[..<eq].trimming(" \t\r\n/")))
            rest = rest[rest.index(after: eq)...].drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            guard let quote = rest.first, quote == "\"" || quote == "'" else { break }
            rest = rest.dropFirst()
            guard let end = rest.firstIndex(of: quote) else { break }
            out[key] = unescape(rest[..<end])
            rest = rest[rest.index(after: end)...]
        }
        return out
    }

    /// The five named entities and numeric references.
    package static func unescape(_ s: Substring) -> String {
        guard s.contains("&") else { return String(s) }
        var out = ""
        var rest = s
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            rest = rest[rest.index(after: amp)...]
            guard let semi = rest.prefix(12).firstIndex(of: ";") else {
                out += "&"
                continue
            }
            let entity = rest[..<semi]
            rest = rest[rest.index(after: semi)...]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let value = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let value, let scalar = Unicode.Scalar(value) { out.unicodeScalars.append(scalar) } else { out += "&\(entity);" }
            }
        }
        return out + rest
    }
}

extension StringProtocol {
    package func trimming(_ set: String) -> String {
        let scalars = Set(set.unicodeScalars)
        let u = unicodeScalars
        guard let start = u.firstIndex(where: { !scalars.contains($0) }) else { return "" }
        let end = u.lastIndex(where: { !scalars.contains($0) })!
        return String(String.UnicodeScalarView(u[start...end]))
    }
}

/// The character data of an XML part in document order: a line break after each paragraph
/// element, and, where `only` names elements, the text inside those alone (Word's `w:t`: field
/// codes and deleted runs are other elements). Local names, any namespace prefix.
package enum XMLText {
    package static func words(_ xml: String, paragraphs: Set<String>, breaks: Set<String> = [], tabs: Set<String> = [], spaces: Set<String> = [],
                      only: Set<String> = []) -> String {
        var out = ""
        var inside = 0  // depth within `only` elements
        XMLScan.tags(in: xml) { tag, following in
            let closing = tag.hasPrefix("/"), empty = tag.hasSuffix("/")
            let qualified = tag.drop { $0 == "/" }.prefix { !($0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "/") }
            let local = String(qualified.split(separator: ":").last ?? qualified)
            if only.contains(local), !empty { inside += closing ? -1 : 1 }
            if closing, paragraphs.contains(local) { out += "\n" }
            if !closing {
                if breaks.contains(local) { out += "\n" }
                if tabs.contains(local) { out += "\t" }
                if spaces.contains(local) { out += " " }
            }
            if only.isEmpty || inside > 0 { out += XMLScan.unescape(following) }
            return true
        }
        return HTMLText.collapse(out)
    }
}
