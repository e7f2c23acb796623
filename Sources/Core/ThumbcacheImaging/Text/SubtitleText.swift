/// What is said in a subtitle file (SubRip `.srt`, WebVTT `.vtt`): the cues' lines, without
/// their numbers, identifiers, timings, settings, styling tags, or WebVTT's notes and style blocks.
package enum SubtitleText {
    package static func words(_ text: String) -> String {
        var out: [Substring] = []
        var skippingBlock = false
        // By isNewline: "\r\n" is one Character, never equal to "\n".
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        for (i, line) in lines.enumerated() {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty {
                skippingBlock = false
                if out.last?.isEmpty == false { out.append("") }
                continue
            }
            if skippingBlock { continue }
            // WebVTT's header and its NOTE, STYLE and REGION blocks say nothing aloud.
            if i == 0, trimmed.hasPrefix("WEBVTT") { skippingBlock = true; continue }
            if ["NOTE", "STYLE", "REGION"].contains(where: { trimmed == $0 || trimmed.hasPrefix($0 + " ") }) { skippingBlock = true; continue }
            if trimmed.contains("-->") { continue }  // a timing line
            // A cue's number or identifier: the line right before its timing line.
            if i + 1 < lines.count, lines[i + 1].contains("-->") { continue }
            out.append(Substring(withoutTags(trimmed)))
        }
        while out.last?.isEmpty == true { out.removeLast() }
        return out.joined(separator: "\n")
    }

    /// A cue line without `<i>`, `<c.yellow>`, `<00:00:01.000>` and the like; `&amp;`-style
    /// entities decoded as WebVTT has them.
    package static func withoutTags(_ line: Substring) -> String {
        var out = ""
        var inTag = false
        for c in line {
            if c == "<" { inTag = true } else if c == ">" && inTag { inTag = false } else if !inTag { out.append(c) }
        }
        return XMLScan.unescape(Substring(out))
    }
}
