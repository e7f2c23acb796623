#if canImport(Glibc)
import Glibc
#endif
import CThumbcacheRaw
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// A camera raw file through LibRaw: the embedded preview (a JPEG as a rule, then the
/// shrink-on-load JPEG path) turned by the raw file's orientation; a half-size demosaic only when
/// there is no preview at least the output size. Camera metadata comes from the file's TIFF
/// structure where it has one (read in place from the mapping), else from what LibRaw parsed.
final class RawSource: RowSource {
    private let path: String
    private let file: MappedFile
    private let raw: UnsafeMutablePointer<libraw_data_t>
    let header: RowSourceHeader
    private var inner: (any RowSource)?
    private var output = RGBABuffer()

    init(descriptor: Int32, name: String, format: ImageFormat) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        guard let raw = craw_init(0) else {
            throw ImagingError(path: name, reason: .corrupt(craw_load().map { String(cString: $0) } ?? "LibRaw: out of memory"))
        }
        self.raw = raw
        let status = craw_open_buffer(raw, file.bytes.baseAddress, file.bytes.count)
        guard status == LIBRAW_SUCCESS.rawValue else {
            craw_close(raw)
            throw ImagingError(path: name, reason: .corrupt("LibRaw: " + String(cString: craw_strerror(status))))
        }
        let sizes = raw.pointee.sizes
        let tiffBased = [ImageFormat.dng, .cr2, .nef, .arw].contains(format)
        header = RowSourceHeader(
            width: Int(sizes.width), height: Int(sizes.height), hasAlpha: false,
            maxShrink: 8,
            orientation: Self.orientation(flip: sizes.flip), bitsPerSample: Int(raw.pointee.color.raw_bps) > 0 ? Int(raw.pointee.color.raw_bps) : nil,
            colorSpace: "RGB", metadata: (tiffBased ? EXIFData.parse(file.bytes) : nil) ?? Self.metadata(raw))
    }

    deinit {
        inner = nil  // the preview decoder reads LibRaw's memory: it goes first
        craw_close(raw)
    }

    /// LibRaw's flip (0, 3, 5, 6) as an EXIF orientation.
    static func orientation(flip: Int32) -> Orientation {
        switch flip {
        case 3: .down
        case 5: .left
        case 6: .right
        default: .up
        }
    }

    /// What LibRaw parsed from the maker's own structures: for raw files without TIFF EXIF.
    static func metadata(_ raw: UnsafeMutablePointer<libraw_data_t>) -> EXIFData {
        var m = EXIFData()
        let other = raw.pointee.other
        m.make = cString(tuple: raw.pointee.idata.make)
        m.model = cString(tuple: raw.pointee.idata.model)
        m.lensModel = cString(tuple: raw.pointee.lens.Lens)
        if other.iso_speed > 0 { m.isoSpeed = Int(other.iso_speed) }
        if other.shutter > 0 { m.exposureTime = Double(other.shutter) }
        if other.aperture > 0 { m.fNumber = Double(other.aperture) }
        if other.focal_len > 0 { m.focalLength = Double(other.focal_len) }
        if other.timestamp > 0 {
            var t = other.timestamp, parts = tm()
            if localtime_r(&t, &parts) != nil {
                func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
                m.dateTimeOriginal = "\(parts.tm_year + 1900):\(two(parts.tm_mon + 1)):\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
            }
        }
        let gps = other.parsed_gps
        if gps.gpsparsed != 0 {
            let lat = Double(gps.latitude.0) + Double(gps.latitude.1) / 60 + Double(gps.latitude.2) / 3600
            let lon = Double(gps.longitude.0) + Double(gps.longitude.1) / 60 + Double(gps.longitude.2) / 3600
            m.latitude = gps.latref == CChar(UInt8(ascii: "S")) ? -lat : lat
            m.longitude = gps.longref == CChar(UInt8(ascii: "W")) ? -lon : lon
        }
        return m
    }

    private func fail(_ status: Int32) -> ImagingError {
        ImagingError(path: path, reason: .corrupt("LibRaw: " + String(cString: craw_strerror(status))))
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        try start(shrink: shrink, fast: fast, output: ((header.width + 7) / 8, (header.height + 7) / 8))
    }

    func start(shrink: Int, fast: Bool, output size: (width: Int, height: Int)) throws(ImagingError) -> (width: Int, height: Int) {
        if craw_unpack_thumb(raw) == LIBRAW_SUCCESS.rawValue, let preview = try previewSource(atLeast: size) {
            inner = preview
            let h = preview.header
            let d = Thumbnailer.shrinkFactor(width: h.width, height: h.height, outputWidth: size.width, outputHeight: size.height,
                                             maxShrink: h.maxShrink)
            return try preview.start(shrink: d, fast: fast)
        }
        return try halfSize()
    }

    /// The embedded preview if it is at least `size` (stored orientation), as rows.
    private func previewSource(atLeast size: (width: Int, height: Int)) throws(ImagingError) -> (any RowSource)? {
        let thumbnail = raw.pointee.thumbnail
        let (w, h) = (Int(thumbnail.twidth), Int(thumbnail.theight))
        guard let bytes = thumbnail.thumb, thumbnail.tlength > 0 else { return nil }
        switch thumbnail.tformat {
        case LIBRAW_THUMBNAIL_JPEG:
            // Read in place from LibRaw's copy, which lives until libraw_close (deinit ends this
            // source first); its size is judged by its own header, LibRaw's may be missing.
            let jpeg = try ImageDecoders.jpeg(memory: UnsafeRawBufferPointer(start: bytes, count: Int(thumbnail.tlength)),
                                              name: path + " (embedded preview)")
            return jpeg.header.width >= size.width && jpeg.header.height >= size.height ? jpeg : nil
        case LIBRAW_THUMBNAIL_BITMAP where w >= size.width && h >= size.height && w > 0 && h > 0 && Int(thumbnail.tlength) >= w * h * 3:
            var image = RGBABuffer(width: w, height: h)
            let rgb = UnsafeRawBufferPointer(start: bytes, count: w * h * 3)
            for i in 0..<(w * h) {
                image.pixels[i * 4] = rgb[i * 3]
                image.pixels[i * 4 + 1] = rgb[i * 3 + 1]
                image.pixels[i * 4 + 2] = rgb[i * 3 + 2]
                image.pixels[i * 4 + 3] = 255
            }
            return BufferSource(image)
        default:
            return nil
        }
    }

    /// Demosaiced at half size (each 2×2 Bayer block one pixel), camera white balance, 8-bit,
    /// not turned (the orientation is applied with everything else's).
    private func halfSize() throws(ImagingError) -> (width: Int, height: Int) {
        raw.pointee.params.half_size = 1
        raw.pointee.params.use_camera_wb = 1
        raw.pointee.params.output_bps = 8
        raw.pointee.params.user_flip = 0
        var status = craw_unpack(raw)
        guard status == LIBRAW_SUCCESS.rawValue else { throw fail(status) }
        status = craw_dcraw_process(raw)
        guard status == LIBRAW_SUCCESS.rawValue else { throw fail(status) }
        var error: Int32 = 0
        guard let image = craw_dcraw_make_mem_image(raw, &error) else { throw fail(error) }
        defer { craw_dcraw_clear_mem(image) }
        let w = Int(image.pointee.width), h = Int(image.pointee.height), colors = Int(image.pointee.colors)
        guard image.pointee.bits == 8, colors == 3 || colors == 1, w > 0, h > 0 else {
            throw ImagingError(path: path, reason: .corrupt("LibRaw produced an image of \(colors) colours at \(image.pointee.bits) bits"))
        }
        var rgba = RGBABuffer(width: w, height: h)
        withUnsafePointer(to: &image.pointee.data) { start in
            let data = UnsafeRawPointer(start).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(w * h) {
                for c in 0..<3 { rgba.pixels[i * 4 + c] = data[i * colors + (colors == 3 ? c : 0)] }
                rgba.pixels[i * 4 + 3] = 255
            }
        }
        output = rgba
        return (w, h)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        if let inner {
            try inner.readRows(sink)
        } else {
            output.drain(sink)
        }
    }
}

/// Rows already decoded, as a source.
final class BufferSource: RowSource {
    private var buffer: RGBABuffer
    let header: RowSourceHeader

    init(_ buffer: RGBABuffer) {
        self.buffer = buffer
        header = RowSourceHeader(width: buffer.width, height: buffer.height, hasAlpha: false)
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) { (buffer.width, buffer.height) }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        buffer.drain(sink)
    }
}
