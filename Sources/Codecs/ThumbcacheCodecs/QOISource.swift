import CThumbcacheQOI
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// QOI through the format's reference implementation (Debian's qoi.h): the whole image at
    /// once, which qoi.h offers only, so the planner counts it as buffered.
    package static let qoi = ImageDecoderRegistration(.qoi) { (fd, name) throws(ImagingError) in
        try QOISource(descriptor: fd, name: name)
    }
}

/// A QOI image: the header read from the mapping when opened, the pixels decoded by qoi.h on
/// start into one RGBA buffer that is handed on a row at a time.
final class QOISource: RowSource {
    private let path: String
    private let file: MappedFile
    let header: RowSourceHeader
    private var pixels: UnsafeMutablePointer<UInt8>?

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        var info = tcqoi_info()
        switch tcqoi_header(file.bytes.baseAddress, file.bytes.count, &info) {
        case 0: break
        case -2: throw ImagingError(path: name, reason: .corrupt("truncated QOI file"))
        default: throw ImagingError(path: name, reason: .corrupt("not a valid QOI header"))
        }
        // qoi.h repeats the last pixel over whatever a cut-short file lacks: the end marker says
        // whether the file is whole.
        guard tcqoi_has_end_marker(file.bytes.baseAddress, file.bytes.count) != 0 else {
            throw ImagingError(path: name, reason: .corrupt("truncated QOI file"))
        }
        let (width, height) = (Int(info.width), Int(info.height))
        header = RowSourceHeader(width: width, height: height, hasAlpha: info.channels == 4, buffered: true,
                                 bufferedBytes: width * height * 4, bitsPerSample: 8, colorSpace: "RGB")
    }

    deinit { tcqoi_free(pixels) }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        guard let decoded = tcqoi_decode_rgba(file.bytes.baseAddress, file.bytes.count) else {
            throw ImagingError(path: path, reason: .corrupt("qoi.h could not decode the image"))
        }
        pixels = decoded
        return (header.width, header.height)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        guard let pixels else { return }
        let stride = header.width * 4
        for y in 0..<header.height { sink(pixels + y * stride) }
        tcqoi_free(pixels)
        self.pixels = nil
    }
}
