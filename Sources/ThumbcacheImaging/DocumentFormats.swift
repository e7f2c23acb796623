/// Documents and comic books that are archives: OpenDocument, Office Open XML and EPUB (ZIP),
/// comic archives (ZIP, RAR, 7-Zip, tar). Their picture is one they carry: the thumbnail an
/// office suite stored, an e-book's cover, a comic's first page (Docs/MEDIA.md, "Documents").
public enum DocumentFormats {
    /// Every archive-borne document format.
    public static let all: [ImageFormatSignature] = [.openDocumentText, .openDocumentSpreadsheet, .openDocumentPresentation,
                                                     .openDocumentGraphics, .wordDocument, .spreadsheet, .presentation, .epub,
                                                     .comicZIP, .comicRAR, .comic7Zip, .comicTar]
    /// The comic archives: their first image, in natural order, is the picture.
    public static let comics: [ImageFormat] = [.comicZIP, .comicRAR, .comic7Zip, .comicTar]

    static let zip = Magic([0x50, 0x4B, 0x03, 0x04])
    static let rar = Magic("Rar!\u{1A}\u{07}")
    static let sevenZip = Magic([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C])
    static let tar = Magic("ustar", at: 257)

    /// A ZIP whose first entry is `mimetype`, stored, holding `mimeType` (OpenDocument, EPUB).
    static func zipMimetype(_ mimeType: String) -> Magic { zip.and("mimetype", at: 30).and(mimeType, at: 38) }

    /// An archive format's bytes, for a kind only a name tells (a `.cbz` is any ZIP of images).
    static func named(_ name: String, _ magic: Magic) -> ImageFormatSignature.Sniffer {
        ImageFormatSignature.Sniffer(name: name, span: magic.span, needsExtension: true) { magic.matches($0) }
    }
}

extension ImageFormat {
    public static let openDocumentText = ImageFormat(rawValue: "odt")
    public static let openDocumentSpreadsheet = ImageFormat(rawValue: "ods")
    public static let openDocumentPresentation = ImageFormat(rawValue: "odp")
    public static let openDocumentGraphics = ImageFormat(rawValue: "odg")
    public static let wordDocument = ImageFormat(rawValue: "docx")
    public static let spreadsheet = ImageFormat(rawValue: "xlsx")
    public static let presentation = ImageFormat(rawValue: "pptx")
    public static let epub = ImageFormat(rawValue: "epub")
    public static let comicZIP = ImageFormat(rawValue: "cbz")
    public static let comicRAR = ImageFormat(rawValue: "cbr")
    public static let comic7Zip = ImageFormat(rawValue: "cb7")
    public static let comicTar = ImageFormat(rawValue: "cbt")
}

extension ImageFormatSignature {
    public static let openDocumentText = ImageFormatSignature(
        format: .openDocumentText, typeIdentifier: "org.oasis-open.opendocument.text", mimeType: "application/vnd.oasis.opendocument.text",
        extensions: ["odt", "ott"], magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.text")])
    public static let openDocumentSpreadsheet = ImageFormatSignature(
        format: .openDocumentSpreadsheet, typeIdentifier: "org.oasis-open.opendocument.spreadsheet",
        mimeType: "application/vnd.oasis.opendocument.spreadsheet", extensions: ["ods", "ots"],
        magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.spreadsheet")])
    public static let openDocumentPresentation = ImageFormatSignature(
        format: .openDocumentPresentation, typeIdentifier: "org.oasis-open.opendocument.presentation",
        mimeType: "application/vnd.oasis.opendocument.presentation", extensions: ["odp", "otp"],
        magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.presentation")])
    public static let openDocumentGraphics = ImageFormatSignature(
        format: .openDocumentGraphics, typeIdentifier: "org.oasis-open.opendocument.graphics",
        mimeType: "application/vnd.oasis.opendocument.graphics", extensions: ["odg", "otg"],
        magic: [DocumentFormats.zipMimetype("application/vnd.oasis.opendocument.graphics")])
    public static let wordDocument = ImageFormatSignature(
        format: .wordDocument, typeIdentifier: "org.openxmlformats.wordprocessingml.document",
        mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", extensions: ["docx", "docm"], magic: [],
        sniffer: DocumentFormats.named("ooxml-document", DocumentFormats.zip))
    public static let spreadsheet = ImageFormatSignature(
        format: .spreadsheet, typeIdentifier: "org.openxmlformats.spreadsheetml.sheet",
        mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", extensions: ["xlsx", "xlsm"], magic: [],
        sniffer: DocumentFormats.named("ooxml-sheet", DocumentFormats.zip))
    public static let presentation = ImageFormatSignature(
        format: .presentation, typeIdentifier: "org.openxmlformats.presentationml.presentation",
        mimeType: "application/vnd.openxmlformats-officedocument.presentationml.presentation", extensions: ["pptx", "pptm"], magic: [],
        sniffer: DocumentFormats.named("ooxml-presentation", DocumentFormats.zip))
    public static let epub = ImageFormatSignature(
        format: .epub, typeIdentifier: "org.idpf.epub-container", mimeType: "application/epub+zip", extensions: ["epub"],
        magic: [DocumentFormats.zipMimetype("application/epub+zip")])
    public static let comicZIP = ImageFormatSignature(
        format: .comicZIP, typeIdentifier: "org.freedesktop.mime.application.vnd.comicbook+zip", mimeType: "application/vnd.comicbook+zip",
        extensions: ["cbz"], magic: [], sniffer: DocumentFormats.named("comic-zip", DocumentFormats.zip))
    public static let comicRAR = ImageFormatSignature(
        format: .comicRAR, typeIdentifier: "org.freedesktop.mime.application.vnd.comicbook-rar", mimeType: "application/vnd.comicbook-rar",
        extensions: ["cbr"], magic: [], sniffer: DocumentFormats.named("comic-rar", DocumentFormats.rar))
    public static let comic7Zip = ImageFormatSignature(
        format: .comic7Zip, typeIdentifier: "org.freedesktop.mime.application.x-cb7", mimeType: "application/x-cb7",
        extensions: ["cb7"], magic: [], sniffer: DocumentFormats.named("comic-7z", DocumentFormats.sevenZip))
    public static let comicTar = ImageFormatSignature(
        format: .comicTar, typeIdentifier: "org.freedesktop.mime.application.x-cbt", mimeType: "application/x-cbt",
        extensions: ["cbt"], magic: [], sniffer: DocumentFormats.named("comic-tar", DocumentFormats.tar))
}
