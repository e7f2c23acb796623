/// Every format thumbcache decodes, in detection order: one ``FormatDeclaration`` each, in the
/// files of this folder by kind (images, camera raw, video and audio, documents, text and fonts).
///
/// To add a format, declare it in one of them and list it in its kind's array here; then write
/// its decoder in the family's module (Docs/ARCHITECTURE.md, "Adding a format").
package enum FormatCatalogue {
    /// Still images: bitmaps, vectors, HEIF and JPEG XL.
    package static let images: [FormatDeclaration] = [.png, .jpeg, .webP, .gif, .tiff, .heif, .avif, .jpegXL, .svg, .bmp, .ico,
                                                      .cur, .pnm, .tga, .qoi]
    /// Camera raw files, each kind a `public.camera-raw-image`.
    package static let cameraRaw: [FormatDeclaration] = [.dng, .cr2, .cr3, .nef, .arw, .orf, .raf, .rw2]
    /// Video containers: `public.movie` and its kinds.
    package static let movies: [FormatDeclaration] = [.mpeg4, .quickTime, .threeGPP, .matroska, .webM, .avi, .mpeg, .mpegTS, .asf,
                                                      .flashVideo, .oggVideo]
    /// Audio files: `public.audio` and its kinds.
    package static let audio: [FormatDeclaration] = [.mp3, .mpeg4Audio, .flac, .wave, .aiff, .aac, .oggVorbis, .opus]
    /// PDF, drawn page-first.
    package static let pages: [FormatDeclaration] = [.pdf]
    /// Documents and comic books in archives, whose picture is one they carry.
    package static let archiveDocuments: [FormatDeclaration] = [.openDocumentText, .openDocumentSpreadsheet, .openDocumentPresentation,
                                                                .openDocumentGraphics, .wordDocument, .spreadsheet, .presentation,
                                                                .epub, .comicZIP, .comicRAR, .comic7Zip, .comicTar]
    /// Text of every kind, drawn as a page of its first lines.
    package static let text: [FormatDeclaration] = [.plainText]
    /// Font files, drawn as a sample in the font.
    package static let fonts: [FormatDeclaration] = [.trueType, .openType, .fontCollection, .woff, .woff2, .type1]

    /// The formats with words inside, which the full-text index reads: PDF, text of every kind,
    /// office files and e-books (not comics: pictures only). Each one's decoder registration
    /// extracts them (`CatalogueTests` holds the two together).
    package static let withWords: Set<ImageFormat> = Set(([.pdf] + archiveDocuments + text).map(\.format))
        .subtracting([.comicZIP, .comicRAR, .comic7Zip, .comicTar])

    /// The whole catalogue.
    package static let all: [FormatDeclaration] = images + cameraRaw + movies + audio + pages + archiveDocuments + text + fonts

    private static let byFormat = Dictionary(all.map { ($0.format, $0) }, uniquingKeysWith: { first, _ in first })
    private static let byType = Dictionary(all.map { ($0.type, $0) }, uniquingKeysWith: { first, _ in first })

    /// The declaration of `format`, nil for a format outside the catalogue (a test's).
    package static func declaration(of format: ImageFormat) -> FormatDeclaration? { byFormat[format] }

    /// The catalogued format whose files are of `type`.
    package static func declaration(ofType type: ContentType) -> FormatDeclaration? { byType[type] }

    /// `format` if nothing in a file's bytes can name it (text): what a request carries as the
    /// format to read the file as when no decoder recognises the bytes; nil for any other.
    package static func unnamedByBytes(_ format: ImageFormat?) -> ImageFormat? {
        guard let format, let declaration = declaration(of: format), declaration.magic.isEmpty, declaration.sniffer == nil else { return nil }
        return format
    }

    /// The formats the worker of `family` decodes.
    package static func formats(of family: WorkerFamily) -> [FormatDeclaration] { all.filter { $0.family == family } }
}
