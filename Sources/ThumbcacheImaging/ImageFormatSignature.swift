/// How a format is recognised and named, apart from how it is decoded.
///
/// The app's process detects a file's type and routes it with this; the decoders themselves run
/// where they are linked (PNG and JPEG in-process too, everything else only in the sandboxed
/// worker: Docs/ARCHITECTURE.md, "Formats and where they decode").
public struct ImageFormatSignature: Sendable, Hashable {
    public var format: ImageFormat
    /// The uniform type identifier of its files (`org.webmproject.webp`).
    public var typeIdentifier: String
    /// shared-mime-info's name for it (`image/webp`).
    public var mimeType: String
    /// Filename extensions, lower case, without the dot.
    public var extensions: [String]
    /// Any one of these identifies the format.
    public var magic: [Magic]
    /// A check of a file's first bytes for formats fixed offsets cannot tell (SVG's root element
    /// after an XML prologue); tried before magic, so it may claim files of a more general format.
    public var sniffer: Sniffer?

    public init(format: ImageFormat, typeIdentifier: String, mimeType: String, extensions: [String], magic: [Magic],
                sniffer: Sniffer? = nil) {
        self.format = format
        self.typeIdentifier = typeIdentifier
        self.mimeType = mimeType
        self.extensions = extensions
        self.magic = magic
        self.sniffer = sniffer
    }

    /// A named test of a file's start (`head`, at most ``Sniffer/span`` bytes).
    public struct Sniffer: Sendable, Hashable {
        public var name: String
        /// Bytes of the file's start it wants to see.
        public var span: Int
        public var test: @Sendable (UnsafeRawBufferPointer) -> Bool
        /// For formats without any signature (TGA): tried only after every magic, and only for a
        /// file whose name has one of the format's extensions. Name and bytes must agree.
        public var needsExtension: Bool

        public init(name: String, span: Int, needsExtension: Bool = false, test: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) {
            self.name = name
            self.span = span
            self.needsExtension = needsExtension
            self.test = test
        }

        public static func == (a: Sniffer, b: Sniffer) -> Bool { a.name == b.name }
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    /// Every format some decoder of thumbcache's takes, in-process or in the worker: images,
    /// then the media that render to one (``MediaFormats``).
    public static let all: [ImageFormatSignature] = images + MediaFormats.all

    /// The image formats.
    public static let images: [ImageFormatSignature] = [.png, .jpeg, .webP, .gif, .tiff, .heif, .avif, .jpegXL, .svg,
                                                        .bmp, .ico, .cur, .pnm, .tga] + CameraRaw.signatures

    /// The catalogued format whose files are of the content type `typeIdentifier`.
    public static func format(ofType typeIdentifier: String) -> ImageFormat? {
        all.first { $0.typeIdentifier == typeIdentifier }?.format
    }

    /// The catalogue's entry for `format`.
    public static func of(_ format: ImageFormat) -> ImageFormatSignature? { all.first { $0.format == format } }

    public static let png = ImageFormatSignature(
        format: .png, typeIdentifier: "public.png", mimeType: "image/png", extensions: ["png"],
        magic: [Magic([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])])
    public static let jpeg = ImageFormatSignature(
        format: .jpeg, typeIdentifier: "public.jpeg", mimeType: "image/jpeg", extensions: ["jpg", "jpeg", "jpe"],
        magic: [Magic([0xFF, 0xD8, 0xFF])])
    public static let webP = ImageFormatSignature(
        format: .webP, typeIdentifier: "org.webmproject.webp", mimeType: "image/webp", extensions: ["webp"],
        magic: [Magic("RIFF").and("WEBP", at: 8)])
    public static let gif = ImageFormatSignature(
        format: .gif, typeIdentifier: "com.compuserve.gif", mimeType: "image/gif", extensions: ["gif"],
        magic: [Magic("GIF87a"), Magic("GIF89a")])
    public static let tiff = ImageFormatSignature(
        format: .tiff, typeIdentifier: "public.tiff", mimeType: "image/tiff", extensions: ["tif", "tiff"],
        magic: [Magic([0x49, 0x49, 0x2A, 0x00]), Magic([0x4D, 0x4D, 0x00, 0x2A]),
                Magic([0x49, 0x49, 0x2B, 0x00]), Magic([0x4D, 0x4D, 0x00, 0x2B])])  // classic and BigTIFF
    /// ISO-BMFF: a box size, `ftyp` at 4, the major brand at 8. HEVC-coded brands; `mif1`/`msf1`
    /// are the generic HEIF brands (an AVIF file names `avif` first, and is matched as AVIF).
    public static let heif = ImageFormatSignature(
        format: .heif, typeIdentifier: "public.heic", mimeType: "image/heif", extensions: ["heic", "heif", "hif"],
        magic: ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].map { Magic("ftyp", at: 4).and($0, at: 8) })
    public static let avif = ImageFormatSignature(
        format: .avif, typeIdentifier: "public.avif", mimeType: "image/avif", extensions: ["avif"],
        magic: ["avif", "avis"].map { Magic("ftyp", at: 4).and($0, at: 8) })
    /// JPEG XL: a bare codestream (FF 0A) or the ISO-BMFF container's signature box.
    public static let jpegXL = ImageFormatSignature(
        format: .jpegXL, typeIdentifier: "public.jpeg-xl", mimeType: "image/jxl", extensions: ["jxl"],
        magic: [Magic([0xFF, 0x0A]), Magic([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])])
    /// BMP: "BM" and the size of a known bitmap header at 14.
    public static let bmp = ImageFormatSignature(
        format: .bmp, typeIdentifier: "com.microsoft.bmp", mimeType: "image/bmp", extensions: ["bmp", "dib"],
        magic: [12, 40, 52, 56, 64, 108, 124].map { Magic("BM").and([UInt8($0), 0, 0, 0], at: 14) })
    /// ICO and CUR: a directory whose first entry is plausible (4 zero-led bytes alone say little).
    public static let ico = ImageFormatSignature(
        format: .ico, typeIdentifier: "com.microsoft.ico", mimeType: "image/vnd.microsoft.icon", extensions: ["ico"], magic: [],
        sniffer: Sniffer(name: "ico-directory", span: 22) { looksLikeIconDirectory($0, type: 1) })
    public static let cur = ImageFormatSignature(
        format: .cur, typeIdentifier: "com.microsoft.cur", mimeType: "image/x-win-bitmap", extensions: ["cur"], magic: [],
        sniffer: Sniffer(name: "cur-directory", span: 22) { looksLikeIconDirectory($0, type: 2) })
    /// Netpbm: "P1" … "P7" and whitespace.
    public static let pnm = ImageFormatSignature(
        format: .pnm, typeIdentifier: "public.pbm", mimeType: "image/x-portable-anymap", extensions: ["pbm", "pgm", "ppm", "pnm", "pam"],
        magic: (1...7).flatMap { k in [" ", "\n", "\r", "\t"].map { Magic("P\(k)" + $0) } })
    /// TGA has no signature: a plausible header and the name's extension together.
    public static let tga = ImageFormatSignature(
        format: .tga, typeIdentifier: "com.truevision.tga-image", mimeType: "image/x-tga", extensions: ["tga", "icb", "vda", "vst"],
        magic: [], sniffer: Sniffer(name: "tga-header", span: 18, needsExtension: true) { TGASource.plausible($0) })

    /// An icon directory of `type` (1 icon, 2 cursor) with 1…1024 images whose first entry has a
    /// zero reserved byte and a size and offset past the directory.
    static func looksLikeIconDirectory(_ h: UnsafeRawBufferPointer, type: UInt8) -> Bool {
        guard h.count >= 22, h[0] == 0, h[1] == 0, h[2] == type, h[3] == 0 else { return false }
        let count = Int(h[4]) | Int(h[5]) << 8
        let size = Int(h[14]) | Int(h[15]) << 8 | Int(h[16]) << 16 | Int(h[17]) << 24
        let offset = Int(h[18]) | Int(h[19]) << 8 | Int(h[20]) << 16 | Int(h[21]) << 24
        return (1...1024).contains(count) && h[9] == 0 && size > 0 && offset >= 6 + 16 * count
    }

    /// SVG: XML whose root element is `svg`; no fixed bytes (an XML prologue, comments, a
    /// DOCTYPE may come first), so a sniffer reads the first kilobytes.
    public static let svg = ImageFormatSignature(
        format: .svg, typeIdentifier: "public.svg-image", mimeType: "image/svg+xml", extensions: ["svg"], magic: [],
        sniffer: Sniffer(name: "svg-root", span: 4096, test: looksLikeSVG))

    /// True if `head` is text that opens an `<svg` element before any other element.
    static func looksLikeSVG(_ head: UnsafeRawBufferPointer) -> Bool {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        // XML starts with markup, after whitespace at most: every other file is refused at its
        // first bytes (this runs on every file a warm walks).
        guard let first = bytes.firstIndex(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }),
              bytes[first] == UInt8(ascii: "<"), !bytes.contains(0) else { return false }
        var i = first
        while i < bytes.endIndex {
            guard let lt = bytes[i...].firstIndex(of: UInt8(ascii: "<")) else { return false }
            let rest = bytes[(lt + 1)...]
            if rest.starts(with: Array("svg".utf8)) {
                let next = rest.dropFirst(3).first
                return next == nil || [UInt8(ascii: " "), UInt8(ascii: ">"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
                                       UInt8(ascii: "\t"), UInt8(ascii: "/")].contains(next!)
            }
            // A prologue, a comment or a DOCTYPE may come first; any other element means not SVG.
            guard let first = rest.first, first == UInt8(ascii: "?") || first == UInt8(ascii: "!") else { return false }
            if rest.starts(with: Array("!--".utf8)) {
                guard let end = find(Array("-->".utf8), in: rest) else { return false }
                i = end
            } else {
                guard let gt = rest.firstIndex(of: UInt8(ascii: ">")) else { return false }
                i = gt + 1
            }
        }
        return false
    }

    private static func find(_ needle: [UInt8], in haystack: Slice<UnsafeRawBufferPointer>) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = haystack.startIndex
        while i + needle.count <= haystack.endIndex {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i + needle.count }
            i += 1
        }
        return nil
    }
}

extension ImageFormat {
    public static let webP = ImageFormat(rawValue: "webp")
    public static let gif = ImageFormat(rawValue: "gif")
    public static let tiff = ImageFormat(rawValue: "tiff")
    public static let heif = ImageFormat(rawValue: "heif")
    public static let avif = ImageFormat(rawValue: "avif")
    public static let svg = ImageFormat(rawValue: "svg")
    public static let jpegXL = ImageFormat(rawValue: "jxl")
    public static let bmp = ImageFormat(rawValue: "bmp")
    public static let ico = ImageFormat(rawValue: "ico")
    public static let cur = ImageFormat(rawValue: "cur")
    public static let pnm = ImageFormat(rawValue: "pnm")
    public static let tga = ImageFormat(rawValue: "tga")
}
