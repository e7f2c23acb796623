/// The still-image formats of the catalogue (``FormatCatalogue/images``).
extension FormatDeclaration {
    package static let png = FormatDeclaration(
        .png, type: .png, name: "PNG image", mimeType: "image/png", extensions: ["png"],
        magic: [Magic([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])], conformsTo: [.image])
    package static let jpeg = FormatDeclaration(
        .jpeg, type: .jpeg, name: "JPEG image", mimeType: "image/jpeg", extensions: ["jpg", "jpeg", "jpe"],
        magic: [Magic([0xFF, 0xD8, 0xFF])], conformsTo: [.image])
    package static let webP = FormatDeclaration(
        .webP, type: .webP, name: "WebP image", mimeType: "image/webp", extensions: ["webp"],
        magic: [Magic("RIFF").and("WEBP", at: 8)], conformsTo: [.image])
    package static let gif = FormatDeclaration(
        .gif, type: .gif, name: "GIF image", mimeType: "image/gif", extensions: ["gif"],
        magic: [Magic("GIF87a"), Magic("GIF89a")], conformsTo: [.image])
    /// Classic TIFF and BigTIFF, in either byte order.
    package static let tiff = FormatDeclaration(
        .tiff, type: .tiff, name: "TIFF image", mimeType: "image/tiff", extensions: ["tif", "tiff"],
        magic: [Magic([0x49, 0x49, 0x2A, 0x00]), Magic([0x4D, 0x4D, 0x00, 0x2A]),
                Magic([0x49, 0x49, 0x2B, 0x00]), Magic([0x4D, 0x4D, 0x00, 0x2B])], conformsTo: [.image])
    /// ISO-BMFF: a box size, `ftyp` at 4, the major brand at 8. HEVC-coded brands; `mif1`/`msf1`
    /// are the generic HEIF brands (an AVIF file names `avif` first, and is matched as AVIF).
    package static let heif = FormatDeclaration(
        .heif, type: .heic, name: "HEIF image", mimeType: "image/heif", extensions: ["heic", "heif", "hif"],
        magic: ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].map { Magic("ftyp", at: 4).and($0, at: 8) },
        conformsTo: [.heif])
    package static let avif = FormatDeclaration(
        .avif, type: .avif, name: "AVIF image", mimeType: "image/avif", extensions: ["avif"],
        magic: ["avif", "avis"].map { Magic("ftyp", at: 4).and($0, at: 8) }, conformsTo: [.heif])
    /// JPEG XL: a bare codestream (FF 0A) or the ISO-BMFF container's signature box. libjxl is
    /// slow to load, so the heavy worker decodes it.
    package static let jpegXL = FormatDeclaration(
        .jpegXL, type: .jpegXL, name: "JPEG XL image", mimeType: "image/jxl", extensions: ["jxl"],
        magic: [Magic([0xFF, 0x0A]), Magic([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A])],
        conformsTo: [.image], family: .heavy)
    /// SVG: XML whose root element is `svg`; no fixed bytes (an XML prologue, comments, a
    /// DOCTYPE may come first), so a sniffer reads the first kilobytes. Drawn by librsvg in the
    /// vector worker.
    package static let svg = FormatDeclaration(
        .svg, type: .svg, name: "SVG image", mimeType: "image/svg+xml", extensions: ["svg"],
        sniffer: Sniffer(name: "svg-root", span: 4096, test: looksLikeSVG), conformsTo: [.image, .text], family: .vector)
    /// BMP: "BM" and the size of a known bitmap header at 14.
    package static let bmp = FormatDeclaration(
        .bmp, type: "com.microsoft.bmp", name: "BMP image", mimeType: "image/bmp", extensions: ["bmp", "dib"],
        magic: [12, 40, 52, 56, 64, 108, 124].map { Magic("BM").and([UInt8($0), 0, 0, 0], at: 14) }, conformsTo: [.image])
    /// ICO and CUR: a directory whose first entry is plausible (4 zero-led bytes alone say little).
    package static let ico = FormatDeclaration(
        .ico, type: "com.microsoft.ico", name: "Windows icon", mimeType: "image/vnd.microsoft.icon", extensions: ["ico"],
        sniffer: Sniffer(name: "ico-directory", span: 22) { looksLikeIconDirectory($0, type: 1) }, conformsTo: [.image])
    package static let cur = FormatDeclaration(
        .cur, type: "com.microsoft.cur", name: "Windows cursor", mimeType: "image/x-win-bitmap", extensions: ["cur"],
        sniffer: Sniffer(name: "cur-directory", span: 22) { looksLikeIconDirectory($0, type: 2) }, conformsTo: [.image])
    /// Netpbm: "P1" … "P7" and whitespace.
    package static let pnm = FormatDeclaration(
        .pnm, type: "public.pbm", name: "Netpbm image",
        mimeType: "image/x-portable-anymap", extensions: ["pbm", "pgm", "ppm", "pnm", "pam"],
        magic: (1...7).flatMap { k in [" ", "\n", "\r", "\t"].map { Magic("P\(k)" + $0) } }, conformsTo: [.image])
    /// TGA has no signature: a plausible header and the name's extension together.
    package static let tga = FormatDeclaration(
        .tga, type: "com.truevision.tga-image", name: "TGA image", mimeType: "image/x-tga", extensions: ["tga", "icb", "vda", "vst"],
        sniffer: Sniffer(name: "tga-header", span: 18, needsExtension: true) { TGASource.plausible($0) }, conformsTo: [.image])
    /// QOI, the Quite OK Image format: "qoif", then the size, channels and colour space.
    package static let qoi = FormatDeclaration(
        .qoi, type: "org.qoiformat.qoi", name: "QOI image", mimeType: "image/qoi", extensions: ["qoi"],
        magic: [Magic("qoif")], conformsTo: [.image])

    /// An icon directory of `type` (1 icon, 2 cursor) with 1…1024 images whose first entry has a
    /// zero reserved byte and a size and offset past the directory.
    static func looksLikeIconDirectory(_ h: UnsafeRawBufferPointer, type: UInt8) -> Bool {
        guard h.count >= 22, h[0] == 0, h[1] == 0, h[2] == type, h[3] == 0 else { return false }
        let count = Int(h[4]) | Int(h[5]) << 8
        let size = Int(h[14]) | Int(h[15]) << 8 | Int(h[16]) << 16 | Int(h[17]) << 24
        let offset = Int(h[18]) | Int(h[19]) << 8 | Int(h[20]) << 16 | Int(h[21]) << 24
        return (1...1024).contains(count) && h[9] == 0 && size > 0 && offset >= 6 + 16 * count
    }

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
    package static let webP = ImageFormat(rawValue: "webp")
    package static let gif = ImageFormat(rawValue: "gif")
    package static let tiff = ImageFormat(rawValue: "tiff")
    package static let heif = ImageFormat(rawValue: "heif")
    package static let avif = ImageFormat(rawValue: "avif")
    package static let svg = ImageFormat(rawValue: "svg")
    package static let jpegXL = ImageFormat(rawValue: "jxl")
    package static let bmp = ImageFormat(rawValue: "bmp")
    package static let ico = ImageFormat(rawValue: "ico")
    package static let cur = ImageFormat(rawValue: "cur")
    package static let pnm = ImageFormat(rawValue: "pnm")
    package static let tga = ImageFormat(rawValue: "tga")
    package static let qoi = ImageFormat(rawValue: "qoi")
}
