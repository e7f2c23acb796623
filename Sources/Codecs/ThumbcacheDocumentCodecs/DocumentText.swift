import CThumbcacheArchive
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// The words of a document that is an archive, for the full-text index: OpenDocument's body,
/// Word's paragraphs, a spreadsheet's shared strings, a presentation's slides in order, an
/// e-book's chapters in reading order (its spine). Parts are read by name into memory under a cap,
/// as the pictures are (ArchiveSource); reading stops once `limit` bytes of text are in hand.
enum DocumentText {
    /// The most a part that holds text may decompress to.
    static let partCap = 32 << 20

    static func words(descriptor: Int32, name: String, format: ImageFormat, limit: Int) throws(ImagingError) -> String {
        let file = try MappedFile(descriptor: descriptor, name: name)
        var text = ""
        func add(_ part: String, _ read: (String) -> String) throws(ImagingError) {
            guard text.utf8.count < limit, let bytes = try ArchiveSource.read(file.bytes, part, cap: partCap, name: name) else { return }
            defer { carchive_free(bytes.baseAddress) }
            let words = read(String(decoding: bytes, as: UTF8.self))
            guard !words.isEmpty else { return }
            text += (text.isEmpty ? "" : "\n\n") + words
        }
        switch format {
        case .openDocumentText, .openDocumentSpreadsheet, .openDocumentPresentation, .openDocumentGraphics:
            try add("content.xml") { XMLText.words($0, paragraphs: ["p", "h"], breaks: ["line-break"], tabs: ["tab"], spaces: ["s"]) }
        case .wordDocument:
            try add("word/document.xml") { XMLText.words($0, paragraphs: ["p"], breaks: ["br", "cr"], tabs: ["tab"], only: ["t"]) }
        case .spreadsheet:
            try add("xl/sharedStrings.xml") { XMLText.words($0, paragraphs: ["si"], only: ["t"]) }
        case .presentation:
            let slides = try ArchiveSource.list(file.bytes, name: name)
                .filter { $0.hasPrefix("ppt/slides/slide") && $0.hasSuffix(".xml") }.sorted(by: ArchiveSource.naturalOrder)
            for slide in slides { try add(slide) { XMLText.words($0, paragraphs: ["p"], breaks: ["br"], only: ["t"]) } }
        case .epub:
            for chapter in try spine(file.bytes, name: name) { try add(chapter) { HTMLText.words($0) } }
        default:
            throw ImagingError(path: name, reason: .noTextExtractor(format: format.rawValue))
        }
        return text
    }

    /// An e-book's chapters in reading order: the package document's spine, each `itemref`'s
    /// manifest item, as entry names.
    static func spine(_ archive: UnsafeRawBufferPointer, name: String) throws(ImagingError) -> [String] {
        guard let container = try ArchiveSource.xml(archive, "META-INF/container.xml", name: name),
              let opfPath = container.all("rootfile").compactMap({ $0.attributes["full-path"] }).first,
              let opf = try ArchiveSource.xml(archive, opfPath, name: name)
        else { throw ImagingError(path: name, reason: .corrupt("an EPUB without a package document (META-INF/container.xml)")) }
        var hrefs: [String: String] = [:]
        for item in opf.all("item") {
            if let id = item.attributes["id"], let href = item.attributes["href"] { hrefs[id] = href }
        }
        return opf.all("itemref").compactMap { $0.attributes["idref"].flatMap { hrefs[$0] } }.map { ArchiveSource.resolve($0, against: opfPath) }
    }
}
