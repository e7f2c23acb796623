import CThumbcacheTIFF
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// TIFF through libtiff: the first page or a reduced-resolution copy, in bands.
    package static let tiff = ImageDecoderRegistration(.tiff) { (fd, name) throws(ImagingError) in
        try TIFFSource(descriptor: fd, name: name)
    }.loadingLibrary { _ = ctiff_load() }
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
    /// The chosen image's strips when they are LZW that ``TIFFLZW`` decodes (the common TIFF).
    private var lzw: ctiff_lzw_layout?
    /// False: every strip through libtiff's RGBA interface (the tests' reference).
    let decodesLZW: Bool
    /// Whether the chosen image's strips go through ``TIFFLZW`` (known once started).
    var decodedByTIFFLZW: Bool { lzw != nil }

    /// Bands taller than this many bytes mean a file in one huge compressed strip: it is held
    /// whole, and checked against the buffered-decode limit.
    static let streamedBandBytes = 16 << 20

    init(descriptor: Int32, name: String, decodesLZW: Bool = true) throws(ImagingError) {
        path = name
        self.decodesLZW = decodesLZW
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
        guard ctiff_select(decoder, d > 1 ? minimum.0 : info.width, d > 1 ? minimum.1 : info.height, &w, &h, &rows) == 0 else { throw fail() }
        var layout = ctiff_lzw_layout()
        if decodesLZW && ctiff_lzw_strips(decoder, &layout) == 1 {
            lzw = layout
        } else {
            guard ctiff_begin(decoder) == 0 else { throw fail() }
        }
        size = (Int(w), Int(h), max(1, Int(rows)))
        return (size.width, size.height)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        if let lzw { return try readLZWRows(lzw, sink) }
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
                            for c in 0..<3 { row[x + c] = Self.straight(source[x + c], alpha: UInt8(a)) }
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

    /// The strips decoded by ``TIFFLZW`` (libtiff's for a strip it does not take), the predictor
    /// undone and each row made RGBA with straight alpha, as the RGBA interface's rows are made.
    private func readLZWRows(_ layout: ctiff_lzw_layout, _ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let (width, height, _) = size
        let samples = Int(layout.samples), rowsPerStrip = Int(layout.rows_per_strip)
        let rowBytes = width * samples
        let stripBytes = rowBytes * rowsPerStrip
        let strip = UnsafeMutablePointer<UInt8>.allocate(capacity: stripBytes + TIFFLZW.slack)
        strip.initialize(repeating: 0, count: stripBytes + TIFFLZW.slack)
        defer { strip.deallocate() }
        var raw: [UInt8] = []
        var row = [UInt8](repeating: 255, count: width * 4)
        let lzwDecoder = TIFFLZW()
        var y = 0, index: UInt32 = 0
        while y < height {
            let rows = min(rowsPerStrip, height - y)
            let count = rows * rowBytes
            let stored = ctiff_raw_strip_size(decoder, index)
            guard stored >= 0 else { throw ImagingError(path: path, reason: .corrupt("strip \(index) is missing or too large")) }
            if raw.count < Int(stored) { raw = [UInt8](repeating: 0, count: Int(stored)) }
            let read = raw.withUnsafeMutableBytes { ctiff_read_raw_strip(decoder, index, $0.baseAddress, stored) }
            guard read == stored else { throw fail() }
            var differenced = false
            let decoded = raw.withUnsafeBytes { bytes in
                Result { () throws(TIFFLZW.Failure) in
                    try lzwDecoder.decode(UnsafeRawBufferPointer(rebasing: bytes[0..<Int(stored)]), into: strip, count: count)
                }
            }
            switch decoded {
            case .success:
                differenced = layout.predictor == 2
            case .failure(.unusual):
                guard ctiff_read_strip(decoder, index, strip, Int64(count)) == Int64(count) else { throw fail() }
                differenced = false
            case .failure(.corrupt):
                throw ImagingError(path: path, reason: .corrupt("LZW codes no table holds in strip \(index)"))
            case .failure(.short(let made)):
                throw ImagingError(path: path, reason: .corrupt("strip \(index) ends after \(made) of its \(count) bytes"))
            }
            row.withUnsafeMutableBufferPointer { out in
                for r in 0..<rows {
                    Self.rgba(strip + r * rowBytes, into: out.baseAddress!, width: width, samples: samples, associated: layout.alpha == 1,
                              differenced: differenced)
                    sink(out.baseAddress!)
                }
            }
            y += rows
            index += 1
        }
    }

    /// One row of 8-bit gray, gray and alpha, RGB or RGBA samples as RGBA with straight alpha;
    /// `differenced`: each sample stored as the difference from the pixel before (predictor 2).
    static func rgba(_ source: UnsafeMutablePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, width: Int, samples: Int,
                     associated: Bool, differenced: Bool) {
        let pixels = UnsafeMutableRawPointer(out)
        switch samples {
        case 1:
            var g: UInt8 = 0
            for x in 0..<width {
                g = differenced ? g &+ source[x] : source[x]
                pixels.storeBytes(of: UInt32(g) &* 0x01_01_01 | 0xFF00_0000, toByteOffset: x &* 4, as: UInt32.self)
            }
        case 3:
            var (r, g, b): (UInt8, UInt8, UInt8) = (0, 0, 0)
            for x in 0..<width {
                let p = source + x &* 3
                (r, g, b) = differenced ? (r &+ p[0], g &+ p[1], b &+ p[2]) : (p[0], p[1], p[2])
                pixels.storeBytes(of: UInt32(r) | UInt32(g) &<< 8 | UInt32(b) &<< 16 | 0xFF00_0000, toByteOffset: x &* 4, as: UInt32.self)
            }
        default:
            if differenced {
                // Undone in place: each sample plus the same sample of the pixel before.
                for i in samples..<(width * samples) { source[i] &+= source[i - samples] }
            }
            let colour = samples - 1
            for x in 0..<width {
                let p = source + x * samples
                let a = p[colour]
                for c in 0..<3 {
                    let v = p[colour == 1 ? 0 : c]
                    out[4 * x + c] = associated ? Self.straight(v, alpha: a) : v
                }
                out[4 * x + 3] = a
            }
        }
    }

    /// A premultiplied sample with straight alpha again (0 where the pixel is transparent).
    @inline(__always)
    static func straight(_ v: UInt8, alpha a: UInt8) -> UInt8 {
        a == 0 ? 0 : UInt8(min(255, (Int(v) * 255 + Int(a) / 2) / Int(a)))
    }
}
