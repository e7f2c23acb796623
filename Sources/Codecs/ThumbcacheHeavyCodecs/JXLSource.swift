import CThumbcacheJXL
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// JPEG XL through libjxl: the first frame, upright.
    package static let jpegXL = ImageDecoderRegistration(.jpegXL) { (fd, name) throws(ImagingError) in
        try JXLSource(descriptor: fd, name: name)
    }
}

/// A JPEG XL (bare codestream or ISO-BMFF container) through libjxl: the first frame, composed
/// and turned upright by libjxl, decoded whole into RGBA8 (libjxl has no scaled decode the
/// planner could use here).
final class JXLSource: RowSource {
    private let path: String
    private let file: MappedFile
    private let decoder: OpaquePointer
    let header: RowSourceHeader
    /// Where libjxl writes: memory of our own, so its address holds between calls (a Swift
    /// array's need not).
    private var output: UnsafeMutableBufferPointer<UInt8>?

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        guard let decoder = JxlDecoderCreate(nil) else { throw ImagingError(path: name, reason: .corrupt("libjxl: out of memory")) }
        self.decoder = decoder
        var info = JxlBasicInfo()
        var exif: [UInt8]?
        do throws(ImagingError) {
            guard JxlDecoderSubscribeEvents(decoder, Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_BOX.rawValue | JXL_DEC_FULL_IMAGE.rawValue)) == JXL_DEC_SUCCESS,
                  JxlDecoderSetInput(decoder, file.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), file.bytes.count) == JXL_DEC_SUCCESS
            else { throw ImagingError(path: name, reason: .corrupt("libjxl refused the input")) }
            JxlDecoderCloseInput(decoder)
            _ = JxlDecoderSetDecompressBoxes(decoder, JXL_TRUE)
            _ = JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE)
            // Boxes (EXIF among them) come before the codestream's header in the container.
            let box = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 16)
            defer { box.deallocate() }
            var inExif = false, oversized = false
            loop: while true {
                let status = JxlDecoderProcessInput(decoder)
                switch status {
                case JXL_DEC_BOX:
                    if inExif { exif = Self.finish(box: box, decoder) } else if oversized { _ = JxlDecoderReleaseBoxBuffer(decoder) }
                    oversized = false
                    var type: JxlBoxType = (0, 0, 0, 0)
                    inExif = JxlDecoderGetBoxType(decoder, &type, JXL_TRUE) == JXL_DEC_SUCCESS && type == (0x45, 0x78, 0x69, 0x66)  // "Exif"
                    if inExif { _ = JxlDecoderSetBoxBuffer(decoder, box.baseAddress, box.count) }
                case JXL_DEC_BOX_NEED_MORE_OUTPUT:
                    // An EXIF block over 64 KiB is not read: its bytes are overwritten and dropped.
                    _ = JxlDecoderReleaseBoxBuffer(decoder)
                    _ = JxlDecoderSetBoxBuffer(decoder, box.baseAddress, box.count)
                    inExif = false
                    oversized = true
                case JXL_DEC_BASIC_INFO:
                    if inExif { exif = Self.finish(box: box, decoder) }
                    inExif = false
                    guard JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else {
                        throw ImagingError(path: name, reason: .corrupt("unreadable JPEG XL header"))
                    }
                // A container may carry the EXIF box (Brotli-compressed by cjxl) after the header's
                // part of the codestream: read on to where the pixels start.
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                    if inExif { exif = Self.finish(box: box, decoder) }
                    break loop
                case JXL_DEC_NEED_MORE_INPUT:
                    throw ImagingError(path: name, reason: .corrupt("truncated JPEG XL file"))
                default:
                    throw ImagingError(path: name, reason: .corrupt("invalid JPEG XL file"))
                }
            }
        } catch {
            JxlDecoderDestroy(decoder)
            throw error
        }
        // libjxl turns the pixels itself: the header gives the displayed size.
        let turned = info.orientation.rawValue >= 5
        let (w, h) = turned ? (Int(info.ysize), Int(info.xsize)) : (Int(info.xsize), Int(info.ysize))
        header = RowSourceHeader(width: w, height: h, hasAlpha: info.alpha_bits > 0, exif: exif, buffered: true,
                                 bufferedBytes: w * h * 16, orientation: .up, bitsPerSample: Int(info.bits_per_sample),
                                 colorSpace: info.num_color_channels == 1 ? "Gray" : "RGB",
                                 frameCount: info.have_animation != 0 ? nil : 1)
    }

    deinit {
        JxlDecoderDestroy(decoder)
        output?.deallocate()
    }

    /// The EXIF box's TIFF bytes (it starts with a 4-byte offset to the TIFF header).
    private static func finish(box: UnsafeMutableBufferPointer<UInt8>, _ decoder: OpaquePointer) -> [UInt8]? {
        let used = box.count - JxlDecoderReleaseBoxBuffer(decoder)
        return exifTIFF(inBox: UnsafeBufferPointer(rebasing: box[..<used]))
    }

    /// Bytes per pixel of the frame libjxl writes: RGB when opaque (a quarter less memory and
    /// bandwidth), each row widened to RGBA as it is handed on.
    private var channels: Int { header.hasAlpha ? 4 : 3 }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        var format = JxlPixelFormat(num_channels: UInt32(channels), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        let image = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: header.width * header.height * channels)
        output = image
        // The decoder stopped at NEED_IMAGE_OUT_BUFFER when the header was read.
        var status = JXL_DEC_NEED_IMAGE_OUT_BUFFER
        while true {
            switch status {
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                var size = 0
                guard JxlDecoderImageOutBufferSize(decoder, &format, &size) == JXL_DEC_SUCCESS, size == image.count else {
                    throw ImagingError(path: path, reason: .corrupt("JPEG XL frame of an unexpected size"))
                }
                guard JxlDecoderSetImageOutBuffer(decoder, &format, image.baseAddress, image.count) == JXL_DEC_SUCCESS else { throw ImagingError(path: path, reason: .corrupt("libjxl refused the output buffer")) }
            case JXL_DEC_FULL_IMAGE:
                return (header.width, header.height)
            case JXL_DEC_BOX, JXL_DEC_BOX_NEED_MORE_OUTPUT:
                continue
            case JXL_DEC_NEED_MORE_INPUT, JXL_DEC_SUCCESS:
                throw ImagingError(path: path, reason: .corrupt("truncated JPEG XL file"))
            default:
                throw ImagingError(path: path, reason: .corrupt("invalid JPEG XL data"))
            }
            status = JxlDecoderProcessInput(decoder)
        }
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        guard let image = output else { return }
        defer {
            image.deallocate()
            output = nil
        }
        sinkInterleaved(image.baseAddress!, stride: header.width * channels, channels: channels, width: header.width,
                        height: header.height, sink)
    }
}
