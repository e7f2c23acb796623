/// A type identifier after Apple's Uniform Type Identifiers: `public.png`, `public.image`…
/// Types form a conformance tree (`public.png` conforms to `public.image`, which conforms to
/// `public.data` and `public.content`); the tree is the content-type registry's.
public struct ContentType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ identifier: String) { rawValue = identifier }
    public init(stringLiteral value: String) { rawValue = value }
    public var identifier: String { rawValue }
    public var description: String { rawValue }

    /// A short human name: the catalogue's for a format thumbcache decodes ("JPEG XL image"),
    /// else the name of a general type ("movie", "ZIP archive"), else, for a type named after
    /// its MIME type (`org.freedesktop.mime.text.x-rust`), that MIME type ("text/x-rust file"),
    /// else the identifier.
    public var displayName: String {
        if let name = FormatCatalogue.declaration(ofType: self)?.displayName ?? Self.generalNames[self] { return name }
        let prefix = "org.freedesktop.mime."
        guard rawValue.hasPrefix(prefix), let dot = rawValue.dropFirst(prefix.count).firstIndex(of: ".") else { return rawValue }
        return rawValue[rawValue.index(rawValue.startIndex, offsetBy: prefix.count)..<dot] + "/" + rawValue[rawValue.index(after: dot)...] + " file"
    }

    /// Names of the types that are not one decoded format: the tree's inner nodes and the
    /// containers documents are kinds of.
    private static let generalNames: [ContentType: String] = [
        .item: "item", .content: "content", .data: "data", .folder: "folder", .image: "image", .heif: "HEIF image",
        .cameraRawImage: "camera raw image", .text: "text", .plainText: "plain text", .sourceCode: "source code", .font: "font",
        .audiovisualContent: "audiovisual content", .audio: "audio", .movie: "movie", .compositeContent: "document",
        .archive: "archive", .zip: "ZIP archive", .rar: "RAR archive", .sevenZip: "7-Zip archive", .tar: "tar archive",
    ]

    package static let item: ContentType = "public.item"
    package static let content: ContentType = "public.content"
    public static let data: ContentType = "public.data"
    public static let folder: ContentType = "public.folder"
    public static let image: ContentType = "public.image"
    public static let png: ContentType = "public.png"
    public static let jpeg: ContentType = "public.jpeg"
    public static let gif: ContentType = "com.compuserve.gif"
    public static let webP: ContentType = "org.webmproject.webp"
    public static let tiff: ContentType = "public.tiff"
    public static let heic: ContentType = "public.heic"
    public static let heif: ContentType = "public.heif"
    public static let avif: ContentType = "public.avif"
    public static let jpegXL: ContentType = "public.jpeg-xl"
    public static let svg: ContentType = "public.svg-image"
    package static let cameraRawImage: ContentType = "public.camera-raw-image"
    public static let text: ContentType = "public.text"
    public static let plainText: ContentType = "public.plain-text"
    package static let sourceCode: ContentType = "public.source-code"
    public static let font: ContentType = "public.font"
    public static let pdf: ContentType = "com.adobe.pdf"
    package static let audiovisualContent: ContentType = "public.audiovisual-content"
    public static let audio: ContentType = "public.audio"
    public static let movie: ContentType = "public.movie"
    package static let compositeContent: ContentType = "public.composite-content"
    package static let archive: ContentType = "public.archive"
    package static let zip: ContentType = "public.zip-archive"
    package static let rar: ContentType = "com.rarlab.rar-archive"
    package static let sevenZip: ContentType = "org.7-zip.7-zip-archive"
    package static let tar: ContentType = "public.tar-archive"
}

