/// How documents and comic books that are archives are told apart: OpenDocument, Office Open XML and EPUB (ZIP),
/// comic archives (ZIP, RAR, 7-Zip, tar). Their picture is one they carry: the thumbnail an
/// office suite stored, an e-book's cover, a comic's first page (Docs/MEDIA.md, "Documents").
enum DocumentFormats {
    static let zip = Magic([0x50, 0x4B, 0x03, 0x04])
    static let rar = Magic("Rar!\u{1A}\u{07}")
    static let sevenZip = Magic([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C])
    static let tar = Magic("ustar", at: 257)

    /// A ZIP whose first entry is `mimetype`, stored, holding `mimeType` (OpenDocument, EPUB).
    static func zipMimetype(_ mimeType: String) -> Magic { zip.and("mimetype", at: 30).and(mimeType, at: 38) }

    /// An archive format's bytes, for a kind only a name tells (a `.cbz` is any ZIP of images).
    static func named(_ name: String, _ magic: Magic) -> FormatDeclaration.Sniffer {
        FormatDeclaration.Sniffer(name: name, span: magic.span, needsExtension: true) { magic.matches($0) }
    }
}

extension ImageFormat {
    package static let pdf = ImageFormat(rawValue: "pdf")
    package static let openDocumentText = ImageFormat(rawValue: "odt")
    package static let openDocumentSpreadsheet = ImageFormat(rawValue: "ods")
    package static let openDocumentPresentation = ImageFormat(rawValue: "odp")
    package static let openDocumentGraphics = ImageFormat(rawValue: "odg")
    package static let wordDocument = ImageFormat(rawValue: "docx")
    package static let spreadsheet = ImageFormat(rawValue: "xlsx")
    package static let presentation = ImageFormat(rawValue: "pptx")
    package static let epub = ImageFormat(rawValue: "epub")
    package static let comicZIP = ImageFormat(rawValue: "cbz")
    package static let comicRAR = ImageFormat(rawValue: "cbr")
    package static let comic7Zip = ImageFormat(rawValue: "cb7")
    package static let comicTar = ImageFormat(rawValue: "cbt")
}

/// PDF and the archive-borne documents of the catalogue (``FormatCatalogue/pages``,
/// ``FormatCatalogue/archiveDocuments``).
extension FormatDeclaration {
    package static let pdf = FormatDeclaration(
        .pdf, type: "com.adobe.pdf", name: "PDF document", mimeType: "application/pdf", extensions: ["pdf"], magic: [Magic("%PDF-")],
        conformsTo: [.data, .compositeContent], kind: .document)
    package static let openDocumentText = FormatDeclaration(
        .openDocumentText, type: "org.oasis-open.opendocument.text", name: "OpenDocument text",
        mimeType: "application/vnd.oasis.opendocument.text",
        extensions: ["odt", "ott"], magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.text")],
        conformsTo: [.compositeContent, .zip], kind: .document)
    package static let openDocumentSpreadsheet = FormatDeclaration(
        .openDocumentSpreadsheet, type: "org.oasis-open.opendocument.spreadsheet", name: "OpenDocument spreadsheet",
        mimeType: "application/vnd.oasis.opendocument.spreadsheet", extensions: ["ods", "ots"],
        magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.spreadsheet")],
        conformsTo: [.compositeContent, .zip], kind: .document)
    package static let openDocumentPresentation = FormatDeclaration(
        .openDocumentPresentation, type: "org.oasis-open.opendocument.presentation", name: "OpenDocument presentation",
        mimeType: "application/vnd.oasis.opendocument.presentation", extensions: ["odp", "otp"],
        magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.presentation")],
        conformsTo: [.compositeContent, .zip], kind: .document)
    package static let openDocumentGraphics = FormatDeclaration(
        .openDocumentGraphics, type: "org.oasis-open.opendocument.graphics", name: "OpenDocument drawing",
        mimeType: "application/vnd.oasis.opendocument.graphics", extensions: ["odg", "otg"],
        magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.graphics")],
        conformsTo: [.compositeContent, .zip], kind: .document)
    package static let wordDocument = FormatDeclaration(
        .wordDocument, type: "org.openxmlformats.wordprocessingml.document", name: "Word document",
        mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", extensions: ["docx", "docm"],
        sniffer: DocumentFormats.named("ooxml-document", DocumentFormats.zip), conformsTo: [.compositeContent, .zip], kind: .document)
    package static let spreadsheet = FormatDeclaration(
        .spreadsheet, type: "org.openxmlformats.spreadsheetml.sheet", name: "Excel spreadsheet",
        mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", extensions: ["xlsx", "xlsm"],
        sniffer: DocumentFormats.named("ooxml-sheet", DocumentFormats.zip), conformsTo: [.compositeContent, .zip], kind: .document)
    package static let presentation = FormatDeclaration(
        .presentation, type: "org.openxmlformats.presentationml.presentation", name: "PowerPoint presentation",
        mimeType: "application/vnd.openxmlformats-officedocument.presentationml.presentation", extensions: ["pptx", "pptm"],
        sniffer: DocumentFormats.named("ooxml-presentation", DocumentFormats.zip), conformsTo: [.compositeContent, .zip], kind: .document)
    package static let epub = FormatDeclaration(
        .epub, type: "org.idpf.epub-container", name: "EPUB book", mimeType: "application/epub+zip", extensions: ["epub"],
        magic: [DocumentFormats.zipMimetype("application/epub+zip")], conformsTo: [.compositeContent, .zip], kind: .document)
    package static let comicZIP = FormatDeclaration(
        .comicZIP, type: "org.freedesktop.mime.application.vnd.comicbook+zip", name: "comic book archive",
        mimeType: "application/vnd.comicbook+zip",
        extensions: ["cbz"], sniffer: DocumentFormats.named("comic-zip", DocumentFormats.zip),
        conformsTo: [.compositeContent, .zip], kind: .document)
    package static let comicRAR = FormatDeclaration(
        .comicRAR, type: "org.freedesktop.mime.application.vnd.comicbook-rar", name: "comic book archive (RAR)",
        mimeType: "application/vnd.comicbook-rar",
        extensions: ["cbr"], sniffer: DocumentFormats.named("comic-rar", DocumentFormats.rar),
        conformsTo: [.compositeContent, .rar], kind: .document)
    package static let comic7Zip = FormatDeclaration(
        .comic7Zip, type: "org.freedesktop.mime.application.x-cb7", name: "comic book archive (7-Zip)", mimeType: "application/x-cb7",
        extensions: ["cb7"], sniffer: DocumentFormats.named("comic-7z", DocumentFormats.sevenZip),
        conformsTo: [.compositeContent, .sevenZip], kind: .document)
    package static let comicTar = FormatDeclaration(
        .comicTar, type: "org.freedesktop.mime.application.x-cbt", name: "comic book archive (tar)", mimeType: "application/x-cbt",
        extensions: ["cbt"], sniffer: DocumentFormats.named("comic-tar", DocumentFormats.tar),
        conformsTo: [.compositeContent, .tar], kind: .document)
}
