import CThumbcacheWebP
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// WebP through libwebp: the first frame, scaled on load.
    package static let webP = ImageDecoderRegistration(.webP) { (fd, name) throws(ImagingError) in
        try WebPSource(descriptor: fd, name: name)
    }
}

/// A WebP (still or animated) through libwebp: the first frame, scaled on load by libwebp's own
/// scaler (`use_scaling`) to twice the output when the frame fills the canvas, so a 16 MP photo
/// never exists at full size in memory.
final class WebPSource: RowSource {
    private let path: String
    private let file: MappedFile
    /// The first frame's bitstream (a view into the mapping) and where it sits on the canvas.
    private let frame: UnsafeRawBufferPointer
    private let frameRect: (x: Int, y: Int, width: Int, height: Int)
    let header: RowSourceHeader
    private var output = RGBABuffer()

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        var data = WebPData(bytes: file.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: file.bytes.count)
        var state = WEBP_DEMUX_PARSING_HEADER
        guard let demux = WebPDemuxPartial(&data, &state), state == WEBP_DEMUX_DONE else {
            throw ImagingError(path: name, reason: .corrupt(state == WEBP_DEMUX_PARSE_ERROR || state == WEBP_DEMUX_PARSING_HEADER
                ? "not a valid WebP container" : "truncated WebP file"))
        }
        defer { WebPDemuxDelete(demux) }
        let width = Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH)), height = Int(WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT))
        let flags = WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS)
        let frames = Int(WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT))
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demux, 1, &iterator) != 0 else { throw ImagingError(path: name, reason: .corrupt("WebP file without a frame")) }
        defer { WebPDemuxReleaseIterator(&iterator) }
        frame = UnsafeRawBufferPointer(start: iterator.fragment.bytes, count: iterator.fragment.size)
        frameRect = (Int(iterator.x_offset), Int(iterator.y_offset), Int(iterator.width), Int(iterator.height))
        var exif: [UInt8]?
        var chunk = WebPChunkIterator()
        if WebPDemuxGetChunk(demux, "EXIF", 1, &chunk) != 0 {
            exif = Array(UnsafeBufferPointer(start: chunk.chunk.bytes, count: chunk.chunk.size))
            WebPDemuxReleaseChunkIterator(&chunk)
        }
        // VP8L and VP8 with ALPH carry alpha; the container flag says so for extended files.
        let hasAlpha = flags & UInt32(ALPHA_FLAG.rawValue) != 0 || iterator.has_alpha != 0
        let fillsCanvas = frameRect == (0, 0, width, height)
        header = RowSourceHeader(width: width, height: height, hasAlpha: hasAlpha, exif: exif, maxShrink: fillsCanvas ? 8 : 1,
                                 buffered: !fillsCanvas, bufferedBytes: fillsCanvas ? 0 : width * height * 4,
                                 bitsPerSample: 8, colorSpace: "RGB", frameCount: frames)
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        let d = header.maxShrink > 1 ? max(1, shrink) : 1
        return try decode(width: (frameRect.width + d - 1) / d, height: (frameRect.height + d - 1) / d, fast: fast)
    }

    /// libwebp's scaler averages areas at any ratio, so it scales straight to twice the output
    /// (what the downscaler's kernel wants left to do) rather than to a whole fraction of the
    /// frame, which left the kernel up to four times the pixels.
    func start(shrink: Int, fast: Bool, output size: (width: Int, height: Int)) throws(ImagingError) -> (width: Int, height: Int) {
        guard header.maxShrink > 1, shrink > 1 else { return try start(shrink: shrink, fast: fast) }
        let scale = min(1, 2 * max(Double(size.width) / Double(frameRect.width), Double(size.height) / Double(frameRect.height)))
        let w = Int((Double(frameRect.width) * scale).rounded(.up)), h = Int((Double(frameRect.height) * scale).rounded(.up))
        // Never more than the whole fraction the planner chose.
        return try decode(width: min(max(1, w), (frameRect.width + shrink - 1) / shrink), height: min(max(1, h), (frameRect.height + shrink - 1) / shrink),
                          fast: fast)
    }

    private func decode(width w: Int, height h: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        var decoded = RGBABuffer(width: w, height: h)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw ImagingError(path: path, reason: .corrupt("libwebp version mismatch")) }
        if (w, h) != (frameRect.width, frameRect.height) {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(w)
            config.options.scaled_height = Int32(h)
        }
        config.options.bypass_filtering = fast ? 1 : 0
        config.options.no_fancy_upsampling = fast ? 1 : 0
        config.output.colorspace = MODE_RGBA
        config.output.is_external_memory = 1
        let status = decoded.pixels.withUnsafeMutableBufferPointer { p -> VP8StatusCode in
            config.output.u.RGBA.rgba = p.baseAddress
            config.output.u.RGBA.stride = Int32(w * 4)
            config.output.u.RGBA.size = p.count
            return WebPDecode(frame.baseAddress?.assumingMemoryBound(to: UInt8.self), frame.count, &config)
        }
        WebPFreeDecBuffer(&config.output)
        guard status == VP8_STATUS_OK else { throw ImagingError(path: path, reason: .corrupt(Self.describe(status))) }
        if (w, h) == (frameRect.width, frameRect.height) && frameRect != (0, 0, header.width, header.height) {
            // An animation's first frame smaller than the canvas: placed on a transparent canvas.
            var canvas = RGBABuffer(width: header.width, height: header.height)
            let rows = min(h, header.height - frameRect.y), columns = min(w, header.width - frameRect.x)
            if rows > 0 && columns > 0 {
                for y in 0..<rows {
                    let to = ((frameRect.y + y) * header.width + frameRect.x) * 4
                    canvas.pixels.replaceSubrange(to..<(to + columns * 4), with: decoded.pixels[(y * w * 4)..<(y * w * 4 + columns * 4)])
                }
            }
            decoded = canvas
        }
        output = decoded
        return (output.width, output.height)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        output.drain(sink)
    }

    static func describe(_ status: VP8StatusCode) -> String {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA: "truncated WebP bitstream"
        case VP8_STATUS_BITSTREAM_ERROR: "invalid WebP bitstream"
        case VP8_STATUS_UNSUPPORTED_FEATURE: "unsupported WebP feature"
        case VP8_STATUS_OUT_OF_MEMORY: "out of memory decoding WebP"
        case VP8_STATUS_INVALID_PARAM: "invalid WebP parameters"
        default: "WebP decode failed (status \(status.rawValue))"
        }
    }
}
