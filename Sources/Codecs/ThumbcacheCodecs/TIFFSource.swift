import CThumbcacheTIFF
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// TIFF through libtiff: the first page or a reduced-resolution copy, in bands.
    package static let tiff = ImageDecoderRegistration(.tiff) { (fd, name) throws(ImagingError) in
        try TIFFSource(descriptor: fd, name: name)
    }
}

/// A TIFF through libtiff: the first page, or its smallest reduced-resolution copy (a later
/// reduced page or a SubIFD) still large enough, read in bands of strips or tiles so memory
/// follows the band, not the image. Orientation comes from the Orientation tag.
final class TIFFSource: RowSource {
    private let path: String
    private let decoder: OpaquePointer
    private let info: ctiff_info
    let header: RowSourceHeader
    private var size = (width: 0, height: 0, bandRows: 0)

    /// Bands taller than this many bytes mean a file in one huge compressed strip: it is held
    /// whole, and checked against the buffered-decode limit.
    static let streamedBandBytes = 16 << 20

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        var info = ctiff_info()
        decoder = try opened(name) { ctiff_open_fd(descriptor, &info, $0, $1) }
        self.info = info
        let width = Int(info.width), height = Int(info.height)
        let bandBytes = width * Int(info.band_rows) * 4
        let whole = bandBytes > Self.streamedBandBytes
        header = RowSourceHeader(
            width: width, height: height, hasAlpha: info.has_alpha != 0, maxShrink: info.reduced_images > 0 ? 8 : 1,
            buffered: whole, bufferedBytes: whole ? bandBytes : 0, orientation: Orientation(rawValue: Int(info.orientation)),
            bitsPerSample: Int(info.bits_per_sample), colorSpace: Self.colorSpace(info), frameCount: Int(info.pages),
            metadata: Self.metadata(descriptor: descriptor, name: name))
    }

    deinit { ctiff_close(decoder) }

    /// The file is a TIFF structure itself: IFD0's camera tags and its EXIF and GPS IFDs are read
    /// in place from a mapping (only the pages they lie on are touched; IFD0 often sits at the end).
    static func metadata(descriptor: Int32, name: String) -> EXIFData? {
        guard let file = try? MappedFile(descriptor: descriptor, name: name) else { return nil }
        return EXIFData.parse(file.bytes)
    }

    private func fail() -> ImagingError {
        ImagingError(path: path, reason: .corrupt(String(cString: ctiff_message(decoder))))
    }

    static func colorSpace(_ info: ctiff_info) -> String {
        switch info.photometric {
        case 0, 1: "Gray"
        case 3: "Palette"
        case 5: "CMYK"
        case 8, 9, 10: "Lab"
        default: "RGB"
        }
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        let d = max(1, shrink)
        var w: UInt32 = 0, h: UInt32 = 0, rows: UInt32 = 0
        let minimum = (UInt32((header.width + d - 1) / d), UInt32((header.height + d - 1) / d))
        guard ctiff_select(decoder, d > 1 ? minimum.0 : info.width, d > 1 ? minimum.1 : info.height, &w, &h, &rows) == 0,
              ctiff_begin(decoder) == 0 else { throw fail() }
        size = (Int(w), Int(h), max(1, Int(rows)))
        return (size.width, size.height)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let (width, height, bandRows) = size
        let stride = width * 4
        var band = [UInt32](repeating: 0, count: width * min(bandRows, height))
        var row = [UInt8](repeating: 0, count: stride)
        var y = 0
        while y < height {
            let rows = min(bandRows, height - y)
            let ok = band.withUnsafeMutableBufferPointer { ctiff_read_band(decoder, UInt32(y), UInt32(rows), $0.baseAddress) == 0 }
            guard ok else { throw fail() }
            band.withUnsafeBytes { raw in
                for r in 0..<rows {
                    let source = raw.baseAddress!.advanced(by: r * stride).assumingMemoryBound(to: UInt8.self)
                    if header.hasAlpha {
                        // libtiff's RGBA is premultiplied; rows go out with straight alpha.
                        for x in Swift.stride(from: 0, to: stride, by: 4) {
                            let a = Int(source[x + 3])
                            row[x + 3] = UInt8(a)
                            for c in 0..<3 { row[x + c] = a == 0 ? 0 : UInt8(min(255, (Int(source[x + c]) * 255 + a / 2) / a)) }
                        }
                        row.withUnsafeBufferPointer { sink($0.baseAddress!) }
                    } else {
                        sink(source)
                    }
                }
            }
            y += rows
        }
    }
}
