/// Camera raw formats, told apart by their first bytes: fixed markers where the format has one
/// (CR2, CR3, ORF, RAF, RW2), and for plain TIFF containers (DNG, NEF, ARW) the first IFD: a
/// DNGVersion tag, else the camera's Make.
public enum CameraRaw {
    /// Bytes of a file's start the detection reads: IFD0 and the Make string of the raw
    /// containers seen in practice lie well inside.
    public static let span = 4096

    /// The raw format `head` starts, or nil.
    public static func format(of head: UnsafeRawBufferPointer) -> ImageFormat? {
        // Runs on every file a warm walks, once per raw kind: the first byte rules out nearly all.
        guard let first = head.first, first == UInt8(ascii: "I") || first == UInt8(ascii: "M") || first == UInt8(ascii: "F")
                || (head.count > 4 && head[4] == UInt8(ascii: "f")) else { return nil }
        func at(_ offset: Int, _ bytes: [UInt8]) -> Bool {
            head.count >= offset + bytes.count && head[offset..<(offset + bytes.count)].elementsEqual(bytes)
        }
        if at(0, Marker.raf) { return .raf }
        if at(4, Marker.cr3) { return .cr3 }
        if at(0, Marker.orf1) || at(0, Marker.orf2) || at(0, Marker.orf3) { return .orf }
        if at(0, Marker.rw2) { return .rw2 }
        let little = at(0, Marker.tiffLittle), big = at(0, Marker.tiffBig)
        guard little || big else { return nil }
        if at(8, Marker.cr2) { return .cr2 }
        return tiffContainer(head, littleEndian: little)
    }

    private enum Marker {
        static let raf = Array("FUJIFILMCCD-RAW".utf8), cr3 = Array("ftypcrx ".utf8), cr2: [UInt8] = [0x43, 0x52, 0x02, 0x00]
        static let orf1 = Array("IIRO".utf8), orf2 = Array("IIRS".utf8), orf3 = Array("MMOR".utf8), rw2: [UInt8] = [0x49, 0x49, 0x55, 0x00]
        static let tiffLittle: [UInt8] = [0x49, 0x49, 0x2A, 0x00], tiffBig: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A]
    }

    /// DNG by its DNGVersion tag, NEF and ARW by the Make in IFD0.
    static func tiffContainer(_ head: UnsafeRawBufferPointer, littleEndian: Bool) -> ImageFormat? {
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

    static func sniffer(_ format: ImageFormat) -> ImageFormatSignature.Sniffer {
        ImageFormatSignature.Sniffer(name: "camera-raw-" + format.rawValue, span: span) { CameraRaw.format(of: $0) == format }
    }

    /// The kinds decoded, each with its identifier (conforming to `public.camera-raw-image`).
    public static let signatures: [ImageFormatSignature] = [
        raw(.dng, "com.adobe.raw-image", "image/x-adobe-dng", "dng"),
        raw(.cr2, "com.canon.cr2-raw-image", "image/x-canon-cr2", "cr2"),
        raw(.cr3, "com.canon.cr3-raw-image", "image/x-canon-cr3", "cr3"),
        raw(.nef, "com.nikon.raw-image", "image/x-nikon-nef", "nef"),
        raw(.arw, "com.sony.arw-raw-image", "image/x-sony-arw", "arw"),
        raw(.orf, "com.olympus.raw-image", "image/x-olympus-orf", "orf"),
        raw(.raf, "com.fuji.raw-image", "image/x-fuji-raf", "raf"),
        raw(.rw2, "com.panasonic.rw2-raw-image", "image/x-panasonic-rw2", "rw2"),
    ]

    private static func raw(_ format: ImageFormat, _ type: String, _ mime: String, _ ext: String) -> ImageFormatSignature {
        ImageFormatSignature(format: format, typeIdentifier: type, mimeType: mime, extensions: [ext], magic: [], sniffer: sniffer(format))
    }
}

extension ImageFormat {
    public static let dng = ImageFormat(rawValue: "dng")
    public static let cr2 = ImageFormat(rawValue: "cr2")
    public static let cr3 = ImageFormat(rawValue: "cr3")
    public static let nef = ImageFormat(rawValue: "nef")
    public static let arw = ImageFormat(rawValue: "arw")
    public static let orf = ImageFormat(rawValue: "orf")
    public static let raf = ImageFormat(rawValue: "raf")
    public static let rw2 = ImageFormat(rawValue: "rw2")

    /// True for the camera raw kinds (``CameraRaw/signatures``).
    public var isCameraRaw: Bool { CameraRaw.signatures.contains { $0.format == self } }
}
