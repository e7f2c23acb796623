/// The words of a text file for the full-text index: its charset told as the text pages tell it
/// (``Charset/decode(_:)``); for HTML only what a
/// reader sees, for subtitles what is said, for an e-mail its subject, correspondents and text.
package enum TextExtraction {
    /// The words of the text file on `descriptor`, read no further than `limit` bytes of UTF-8 can come from.
    package static func words(descriptor: Int32, name: String, limit: Int) throws(ImagingError) -> String {
        let reader = try ByteReader(descriptor: descriptor, name: name)
        // UTF-16 and Windows-1252 grow when they become UTF-8: read no more than can make `limit`.
        let bytes = try reader.bytes(at: 0, count: min(reader.size, limit * 2 + 2), what: "text")
        guard let text = bytes.withUnsafeBytes({ Charset.decode($0) }) else { throw ImagingError(path: name, reason: .corrupt("binary data, not text")) }
        let words = switch name.split(separator: ".").last?.lowercased() {
        case "srt", "vtt": SubtitleText.words(text)
        case "eml": MailText.words(text)
        default: looksLikeHTML(text) ? HTMLText.words(text) : text
        }
        return words
    }

    /// True if `text` opens as an HTML document does.
    package static func looksLikeHTML(_ text: String) -> Bool {
        let head = text.prefix(1024).lowercased()
        let start = head.drop { $0.isWhitespace }
        return start.hasPrefix("<!doctype html") || start.hasPrefix("<html") || head.contains("<body") || head.contains("<head>")
    }
}

/// What a reader sees of an HTML document: text between tags, a line break for each block,
/// entities decoded; scripts, styles and comments left out.
package enum HTMLText {
    package static let blocks: Set<String> = ["p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "table",
                                      "title", "section", "article", "header", "footer", "nav", "blockquote", "pre", "hr", "dt", "dd"]
    package static let hidden: Set<String> = ["script", "style", "template", "svg"]
    package static let entities: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "copy": "©", "reg": "®", "trade": "™", "hellip": "…",
        "mdash": "—", "ndash": "–", "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "laquo": "«", "raquo": "»", "euro": "€",
        "eacute": "é", "egrave": "è", "agrave": "à", "ccedil": "ç", "uuml": "ü", "ouml": "ö", "auml": "ä", "szlig": "ß", "deg": "°",
    ]

    package static func words(_ html: String) -> String {
        let s = Array(html.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        // Markup names are ASCII: folded here by hand, with no string made per position.
        func starts(_ text: String, at k: Int) -> Bool {
            var j = k
            for c in text.unicodeScalars {
                guard j < s.count else { return false }
                let v = s[j].value
                guard (v >= 0x41 && v <= 0x5A ? v + 0x20 : v) == c.value else { return false }
                j += 1
            }
            return true
        }
        func skip(past text: String, from k: Int) -> Int {
            var j = k
            while j < s.count && !starts(text, at: j) { j += 1 }
            return min(s.count, j + text.unicodeScalars.count)
        }
        while i < s.count {
            let c = s[i]
            if c == "<" {
                if starts("<!--", at: i) { i = skip(past: "-->", from: i + 4); continue }
                let (name, closing, end) = tag(s, at: i)
                i = end
                if !closing, hidden.contains(name) { i = skip(past: "</" + name, from: i); i = skip(past: ">", from: i); continue }
                if blocks.contains(name) { out.append("\n") }
            } else if c == "&", let (scalars, end) = entity(s, at: i) {
                out.append(contentsOf: scalars)
                i = end
            } else {
                out.append(c)
                i += 1
            }
        }
        return collapse(String(out))
    }

    /// The tag starting at `i` (`<` there): its name lowercased, whether it closes, and where it ends.
    package static func tag(_ s: [Unicode.Scalar], at i: Int) -> (name: String, closing: Bool, end: Int) {
        var j = i + 1
        let closing = j < s.count && s[j] == "/"
        if closing { j += 1 }
        var name = ""
        while j < s.count, s[j].properties.isAlphabetic || ("0"..."9").contains(s[j]) { name.unicodeScalars.append(s[j]); j += 1 }
        var quote: Unicode.Scalar?
        while j < s.count {
            if let q = quote { if s[j] == q { quote = nil } } else if s[j] == "\"" || s[j] == "'" { quote = s[j] } else if s[j] == ">" { break }
            j += 1
        }
        return (name.lowercased(), closing, min(s.count, j + 1))
    }

    /// The entity at `i` (`&` there), decoded, and where it ends; nil if it is not one.
    package static func entity(_ s: [Unicode.Scalar], at i: Int) -> (String.UnicodeScalarView, Int)? {
        guard let semicolon = s[(i + 1)..<min(s.count, i + 12)].firstIndex(of: ";") else { return nil }
        let body = String(String.UnicodeScalarView(s[(i + 1)..<semicolon]))
        if body.hasPrefix("#") {
            let digits = body.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            guard let value, let scalar = Unicode.Scalar(value) else { return nil }
            return (String.UnicodeScalarView([scalar]), semicolon + 1)
        }
        guard let text = entities[body] else { return nil }
        return (text.unicodeScalars, semicolon + 1)
    }

    /// Runs of spaces and tabs as one space, lines trimmed, at most one empty line in a row.
    package static func collapse(_ text: String) -> String {
        var lines: [String] = []
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\u{A0}" })
            let joined = words.joined(separator: " ")
            if joined.isEmpty && (lines.last?.isEmpty ?? true) { continue }
            lines.append(joined)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }
}
