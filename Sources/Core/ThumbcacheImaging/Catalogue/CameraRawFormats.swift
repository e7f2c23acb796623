/// Camera raw formats, told apart by their first bytes: fixed markers where the format has one
/// (CR2, CR3, ORF, RAF, RW2: ordinary magic, more specific than TIFF's), and for plain TIFF
/// containers (DNG, NEF, ARW) a sniffer of the first IFD: a DNGVersion tag, else the camera's Make.
enum CameraRaw {
    /// Bytes of a file's start the IFD sniffer reads: IFD0 and the Make string of the raw
    /// containers seen in practice lie well inside.
    static let span = 4096

    /// The raw format `head` starts, or nil: the catalogue's rules for the raw kinds.
    static func format(of head: UnsafeRawBufferPointer) -> ImageFormat? {
        FormatCatalogue.cameraRaw.first { $0.matches(head) }?.format
    }

    /// DNG by its DNGVersion tag, NEF and ARW by the Make in IFD0.
    static func tiffContainer(_ head: UnsafeRawBufferPointer) -> ImageFormat? {
        // Runs on every file a warm walks, once per TIFF-based kind: the first bytes rule out nearly all.
        guard head.count >= 8, head[0] == head[1], head[0] == UInt8(ascii: "I") || head[0] == UInt8(ascii: "M") else { return nil }
        let littleEndian = head[0] == UInt8(ascii: "I")
        guard littleEndian ? (head[2] == 0x2A && head[3] == 0) : (head[2] == 0 && head[3] == 0x2A) else { return nil }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= head.count else { return nil }
            return littleEndian ? Int(head[o]) | Int(head[o + 1]) << 8 : Int(head[o]) << 8 | Int(head[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard let a = u16(o), let b = u16(o + 2) else { return nil }
            return littleEndian ? a | b << 16 : a << 16 | b
        }
        guard let ifd = u32(4), let count = u16(ifd), count < 1000 else { return nil }
        var make: String?
        for i in 0..<count {
            let entry = ifd + 2 + i * 12
            guard let tag = u16(entry), let type = u16(entry + 2), let n = u32(entry + 4) else { break }
            if tag == 0xC612 { return .dng }
            if tag == 0x010F, type == 2, n > 0, n < 64 {
                let start = n <= 4 ? entry + 8 : (u32(entry + 8) ?? -1)
                if start >= 0, start + n <= head.count {
                    make = String(decoding: head[start..<(start + n)].prefix { $0 != 0 }, as: UTF8.self).uppercased()
                }
            }
        }
        guard let make else { return nil }
        if make.hasPrefix("NIKON") { return .nef }
        if make.hasPrefix("SONY") { return .arw }
        return nil
    }

    /// A raw kind with a fixed marker of its own.
    static func marked(_ format: ImageFormat, _ type: ContentType, _ name: String, _ mime: String, _ ext: String,
                       magic: [Magic]) -> FormatDeclaration {
        FormatDeclaration(format, type: type, name: name, mimeType: mime, extensions: [ext], magic: magic, conformsTo: [.cameraRawImage])
    }

    /// A raw kind in a plain TIFF container, told by its first IFD.
    static func container(_ format: ImageFormat, _ type: ContentType, _ name: String, _ mime: String, _ ext: String) -> FormatDeclaration {
        let sniffer = FormatDeclaration.Sniffer(name: "camera-raw-" + format.rawValue, span: span) { tiffContainer($0) == format }
        return FormatDeclaration(format, type: type, name: name, mimeType: mime, extensions: [ext], sniffer: sniffer,
                                 conformsTo: [.cameraRawImage])
    }
}

/// The camera raw kinds of the catalogue (``FormatCatalogue/cameraRaw``), decoded by LibRaw.
extension FormatDeclaration {
    package static let dng = CameraRaw.container(.dng, "com.adobe.raw-image", "DNG raw image", "image/x-adobe-dng", "dng")
    package static let cr2 = CameraRaw.marked(.cr2, "com.canon.cr2-raw-image", "Canon CR2 raw image", "image/x-canon-cr2", "cr2",
                                             magic: [Magic([0x49, 0x49, 0x2A, 0x00]).and([0x43, 0x52, 0x02, 0x00], at: 8),
                                              Magic([0x4D, 0x4D, 0x00, 0x2A]).and([0x43, 0x52, 0x02, 0x00], at: 8)])
    package static let cr3 = CameraRaw.marked(.cr3, "com.canon.cr3-raw-image", "Canon CR3 raw image", "image/x-canon-cr3", "cr3",
                                             magic: [Magic("ftypcrx ", at: 4)])
    package static let nef = CameraRaw.container(.nef, "com.nikon.raw-image", "Nikon NEF raw image", "image/x-nikon-nef", "nef")
    package static let arw = CameraRaw.container(.arw, "com.sony.arw-raw-image", "Sony ARW raw image", "image/x-sony-arw", "arw")
    package static let orf = CameraRaw.marked(.orf, "com.olympus.raw-image", "Olympus ORF raw image", "image/x-olympus-orf", "orf",
                                             magic: [Magic("IIRO"), Magic("IIRS"), Magic("MMOR")])
    package static let raf = CameraRaw.marked(.raf, "com.fuji.raw-image", "Fujifilm RAF raw image", "image/x-fuji-raf", "raf",
                                             magic: [Magic("FUJIFILMCCD-RAW")])
    package static let rw2 = CameraRaw.marked(.rw2, "com.panasonic.rw2-raw-image", "Panasonic RW2 raw image", "image/x-panasonic-rw2",
                                             "rw2", magic: [Magic([0x49, 0x49, 0x55, 0x00])])
}

extension ImageFormat {
    package static let dng = ImageFormat(rawValue: "dng")
    package static let cr2 = ImageFormat(rawValue: "cr2")
    package static let cr3 = ImageFormat(rawValue: "cr3")
    package static let nef = ImageFormat(rawValue: "nef")
    package static let arw = ImageFormat(rawValue: "arw")
    package static let orf = ImageFormat(rawValue: "orf")
    package static let raf = ImageFormat(rawValue: "raf")
    package static let rw2 = ImageFormat(rawValue: "rw2")

}
