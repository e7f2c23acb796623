/// Text and font files: how they are told from other bytes (Docs/MEDIA.md, "Text and fonts").
package enum TextSniffer {
    /// True if `head` (a file's first bytes: what the caller read, 4 KiB as a rule) reads as
    /// text: a UTF-16 byte-order mark, or no NUL and no control characters but whitespace,
    /// backspace and escape, in valid UTF-8 or (when `latin1` allows, for a file whose name says
    /// text) any 8-bit text. A binary file has NULs or control bytes within its first few KiB as
    /// a rule; text never has.
    package static func looksLikeText(_ head: UnsafeRawBufferPointer, latin1: Bool = true) -> Bool {
        if head.count >= 2, (head[0] == 0xFF && head[1] == 0xFE) || (head[0] == 0xFE && head[1] == 0xFF) { return true }
        let sample = head
        guard !sample.isEmpty else { return false }
        for b in sample where b < 0x20 || b == 0x7F {
            switch b {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x08, 0x1B: continue
            default: return false
            }
        }
        return latin1 || isUTF8(sample)
    }

    /// Valid UTF-8, allowing a multi-byte sequence cut at the end of the sample (a lead byte
    /// and fewer continuation bytes than it announces).
    package static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if String(validating: bytes, as: UTF8.self) != nil { return true }
        guard let lead = bytes.suffix(3).lastIndex(where: { $0 & 0xC0 != 0x80 }), bytes[lead] >= 0xC0 else { return false }
        let announced = bytes[lead] >= 0xF0 ? 4 : bytes[lead] >= 0xE0 ? 3 : 2
        guard bytes.endIndex - lead < announced else { return false }
        return String(validating: UnsafeRawBufferPointer(rebasing: bytes[..<lead]), as: UTF8.self) != nil
    }

    /// A TrueType font's offset table: version 1.0 (or Apple's `true`) and a plausible number of
    /// tables. Four bytes alone are too common to trust without the name.
    static func trueTypeTables(_ h: UnsafeRawBufferPointer) -> Bool {
        guard h.count >= 12, (h[0] == 0 && h[1] == 1 && h[2] == 0 && h[3] == 0) || h.starts(with: "true".utf8) else { return false }
        let tables = Int(h[4]) << 8 | Int(h[5])
        return tables >= 4 && tables <= 64
    }
}

extension ImageFormat {
    package static let text = ImageFormat(rawValue: "text")
    package static let trueType = ImageFormat(rawValue: "ttf")
    package static let openType = ImageFormat(rawValue: "otf")
    package static let fontCollection = ImageFormat(rawValue: "ttc")
    package static let woff = ImageFormat(rawValue: "woff")
    package static let woff2 = ImageFormat(rawValue: "woff2")
    package static let type1 = ImageFormat(rawValue: "type1")
}

/// Text and fonts in the catalogue (``FormatCatalogue/text``, ``FormatCatalogue/fonts``).
extension FormatDeclaration {
    /// Every text type: the app's process tells text by name and bytes (its content type
    /// registry knows the source-code types and shared-mime-info's `text/*` tree); all of them
    /// decode as this one format.
    package static let plainText = FormatDeclaration(
        .text, type: "public.plain-text", name: "plain text", mimeType: "text/plain", extensions: [], conformsTo: [.text], kind: .text)

    package static let trueType = FormatDeclaration(
        .trueType, type: "public.truetype-ttf-font", name: "TrueType font", mimeType: "font/ttf", extensions: ["ttf"],
        magic: [], sniffer: Sniffer(name: "truetype-tables", span: 12, needsExtension: true, test: TextSniffer.trueTypeTables),
        conformsTo: [.font], kind: .font)
    package static let openType = FormatDeclaration(
        .openType, type: "public.opentype-font", name: "OpenType font", mimeType: "font/otf", extensions: ["otf"], magic: [Magic("OTTO")],
        conformsTo: [.font], kind: .font)
    package static let fontCollection = FormatDeclaration(
        .fontCollection, type: "public.truetype-collection-font", name: "font collection",
        mimeType: "font/collection", extensions: ["ttc", "otc"],
        magic: [Magic("ttcf")], conformsTo: [.font], kind: .font)
    package static let woff = FormatDeclaration(
        .woff, type: "org.w3.woff", name: "WOFF font", mimeType: "font/woff", extensions: ["woff"], magic: [Magic("wOFF")],
        conformsTo: [.font], kind: .font)
    package static let woff2 = FormatDeclaration(
        .woff2, type: "org.w3.woff2", name: "WOFF2 font", mimeType: "font/woff2", extensions: ["woff2"], magic: [Magic("wOF2")],
        conformsTo: [.font], kind: .font)
    /// PostScript Type 1: text (PFA, `.t1`) or in PFB's binary segments (a 6-byte header first).
    package static let type1 = FormatDeclaration(
        .type1, type: "com.adobe.postscript-font", name: "PostScript font", mimeType: "application/x-font-type1",
        extensions: ["pfa", "pfb", "t1", "gsf"],
        magic: ["%!PS-AdobeFont", "%!FontType1", "%!PS-Adobe-3.0 Resource-Font"].flatMap { [Magic($0), Magic([0x80, 0x01]).and($0, at: 6)] },
        conformsTo: [.font], kind: .font)
}
