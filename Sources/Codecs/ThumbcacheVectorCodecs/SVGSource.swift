import CThumbcacheSVG
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// SVG through librsvg and cairo: drawn at the output size.
    package static let svg = ImageDecoderRegistration(.svg) { (fd, name) throws(ImagingError) in
        try SVGSource(descriptor: fd, name: name)
    }
}

/// An SVG through librsvg: drawn once at the size the box calls for (a vector is never decoded
/// large and shrunk). Parsed from memory without a base URI, so references to files or the network
/// resolve to nothing (and the worker could not open them anyway); librsvg's own limits on
/// elements and nesting hold, and the worker's time and memory limits bound the rest.
final class SVGSource: DrawnSource {
    private let path: String
    private let document: OpaquePointer
    let header: RowSourceHeader
    var output = RGBABuffer()

    /// The size drawn for a document that states none (no width, height or viewBox).
    static let defaultSide = 512

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        // librsvg parses the whole document from the bytes at once: the mapping ends with init.
        let file = try MappedFile(descriptor: descriptor, name: name)
        var width = 0.0, height = 0.0
        document = try opened(name) {
            csvg_open(file.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), file.bytes.count, &width, &height, $0, $1)
        }
        // Sides below one pixel or absurdly large are replaced by a square default: the aspect
        // ratio is all a box needs.
        let valid = width.isFinite && height.isFinite && width >= 1 && height >= 1 && width <= 1e6 && height <= 1e6
        let w = valid ? Int(width.rounded()) : Self.defaultSide, h = valid ? Int(height.rounded()) : Self.defaultSide
        header = RowSourceHeader(width: max(1, w), height: max(1, h), hasAlpha: true, bitsPerSample: 8, colorSpace: "RGB")
    }

    deinit { csvg_close(document) }

    func draw(width: Int, height: Int) throws(ImagingError) -> RGBABuffer {
        try .drawnAsARGB32(width: width, height: height, path: path) { csvg_render(document, Int32(width), Int32(height), $0, $1, $2) }
    }
}
