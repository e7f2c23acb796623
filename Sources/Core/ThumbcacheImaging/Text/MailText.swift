/// The words of an e-mail message (`.eml`, RFC 5322 with MIME): its subject and correspondents,
/// then its text parts, their transfer encoding (base64, quoted-printable) and charset (UTF-8,
/// else Latin-1/Windows-1252) undone; an HTML part is read as HTML, and only when the message
/// has no plain text alternative. Attachments that are not text are left out.
package enum MailText {
    package typealias Header = (name: String, value: String)

    package static func words(_ message: String) -> String {
        let (headers, body) = split(Substring(message))
        var out: [String] = []
        for name in ["subject", "from", "to", "cc"] {
            if let value = headers.first(where: { $0.name == name })?.value, !value.isEmpty { out.append(decodedWords(value)) }
        }
        let text = part(headers, body, depth: 0)
        if !text.isEmpty { out.append(text) }
        return HTMLText.collapse(out.joined(separator: "\n\n"))
    }

    /// A part's headers (names lower-cased, folded lines joined) and its body.
    package static func split(_ part: Substring) -> ([Header], Substring) {
        var headers: [Header] = []
        var rest = part
        // By isNewline: "\r\n", mail's line end, is one Character, never equal to "\n".
        while let end = rest.firstIndex(where: \.isNewline) {
            let line = rest[..<end]
            rest = rest[rest.index(after: end)...]
            if line.isEmpty { return (headers, rest) }
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += " " + line.drop { $0 == " " || $0 == "\t" }
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((line[..<colon].lowercased(), String(line[line.index(after: colon)...].drop { $0 == " " })))
            }
        }
        return (headers, rest)
    }

    /// The text of a part: a text part decoded, a multipart's text parts (of an alternative, the
    /// plain one), nothing for anything else.
    package static func part(_ headers: [Header], _ body: Substring, depth: Int) -> String {
        let type = headers.first { $0.name == "content-type" }?.value ?? "text/plain"
        let media = type.split(separator: ";").first.map { $0.trimmingSpaces.lowercased() } ?? "text/plain"
        if media.hasPrefix("multipart/"), depth < 8, let boundary = parameter("boundary", in: type) {
            let parts = body.split(separator: "--" + boundary, omittingEmptySubsequences: false).dropFirst().filter { !$0.hasPrefix("--") }
                .map { split($0.drop(while: \.isNewline)) }
            let plain = parts.filter { ($0.0.first { $0.name == "content-type" }?.value ?? "text/plain").lowercased().hasPrefix("text/plain") }
            let chosen = media == "multipart/alternative" && !plain.isEmpty ? plain : parts
            return chosen.map { part($0.0, $0.1, depth: depth + 1) }.filter { !$0.isEmpty }.joined(separator: "\n\n")
        }
        guard media.hasPrefix("text/") else { return "" }
        let encoding = headers.first { $0.name == "content-transfer-encoding" }?.value.trimmingSpaces.lowercased()
        let bytes = encoding == "base64" ? base64(body) : encoding == "quoted-printable" ? quotedPrintable(body) : Array(body.utf8)
        let text = decode(bytes, charset: parameter("charset", in: type))
        return media == "text/html" ? HTMLText.words(text) : text
    }

    /// `name=value` (quoted or not) among a header's `;`-separated parameters.
    package static func parameter(_ name: String, in value: String) -> String? {
        for piece in value.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces.lowercased() == name else { continue }
            return String(pair[1].trimmingSpaces.trimmingCharacters(in: "\""))
        }
        return nil
    }

    /// RFC 2047's encoded words (`=?UTF-8?B?…?=`, `=?ISO-8859-1?Q?…?=`) in a header, decoded.
    package static func decodedWords(_ value: String) -> String {
        var out = "", rest = Substring(value)
        while let start = rest.firstRange(of: "=?") {
            out += rest[..<start.lowerBound]
            let inner = rest[start.upperBound...]
            let pieces = inner.split(separator: "?", maxSplits: 3, omittingEmptySubsequences: false)
            guard pieces.count == 4, pieces[3].hasPrefix("="), ["b", "q"].contains(pieces[1].lowercased()) else {
                out += "=?"
                rest = inner
                continue
            }
            let bytes = pieces[1].lowercased() == "b" ? base64(pieces[2]) : quotedPrintable(Substring(pieces[2].replacing("_", with: " ")))
            out += decode(bytes, charset: String(pieces[0]))
            rest = pieces[3].dropFirst()
            // Space between two encoded words is not part of the text.
            if rest.drop(while: { $0 == " " }).hasPrefix("=?") { rest = rest.drop { $0 == " " } }
        }
        return out + rest
    }

    package static func decode(_ bytes: [UInt8], charset: String?) -> String {
        let name = (charset ?? "utf-8").lowercased()
        if name.contains("8859") || name.contains("1252") || name == "latin1" || (name != "utf-8" && String(validating: bytes, as: UTF8.self) == nil) {
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar(Charset.windows1252[Int($0)]) ?? "\u{FFFD}" }))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func base64(_ text: some StringProtocol) -> [UInt8] {
        var out: [UInt8] = [], buffer: UInt32 = 0, bits = 0
        for c in text.utf8 {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            default: continue  // line breaks, padding
            }
            buffer = buffer << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }

    package static func quotedPrintable(_ text: Substring) -> [UInt8] {
        let u = Array(text.utf8)
        var out: [UInt8] = [], i = 0
        while i < u.count {
            if u[i] == UInt8(ascii: "="), i + 1 < u.count {
                if u[i + 1] == UInt8(ascii: "\n") { i += 2; continue }  // a soft line break
                if u[i + 1] == UInt8(ascii: "\r"), i + 2 < u.count, u[i + 2] == UInt8(ascii: "\n") { i += 3; continue }
                if i + 2 < u.count, let v = UInt8(String(decoding: u[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                    out.append(v)
                    i += 3
                    continue
                }
            }
            out.append(u[i])
            i += 1
        }
        return out
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: Substring {
        let s = self[...]
        return Substring(s.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }

    fileprivate func trimmingCharacters(in set: String) -> Substring {
        Substring(self[...].drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
