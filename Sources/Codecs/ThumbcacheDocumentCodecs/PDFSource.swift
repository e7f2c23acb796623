import CThumbcachePDF
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// PDF through poppler (Splash): a page (the first unless asked) drawn at the output size;
    /// its text, every page in reading order.
    package static let pdf = ImageDecoderRegistration(.pdf) { (fd, name, settings) throws(ImagingError) in
        try PDFSource(descriptor: fd, name: name, page: settings.page)
    }.extractingText { (fd, name, limit) throws(ImagingError) in
        try PDFSource(descriptor: fd, name: name).text(limit: limit)
    }.drawingPages().loadingLibrary {
        // A library that does not load is each PDF's error: cpdf_open says so.
        _ = cpdf_load(nil, 0)
    }
}

/// A PDF through poppler (Splash, as `pdftoppm` draws): one page (the first unless asked) drawn
/// once, straight at the size the box calls for, on white (a page is never rendered large and
/// shrunk). The header's size is that page's crop box in points, after its rotation. Parsed from
/// the mapped file; only that page is loaded, so a document of 100 000 pages costs its
/// cross-reference table, not its pages.
final class PDFSource: DrawnSource {
    private let path: String
    private let file: MappedFile
    private let document: OpaquePointer
    let header: RowSourceHeader
    var output = RGBABuffer()

    /// `page` counts from 0.
    init(descriptor: Int32, name: String, page: Int = 0) throws(ImagingError) {
        path = name
        let file = try MappedFile(descriptor: descriptor, name: name)
        self.file = file
        var info = cpdf_info()
        let opened = Result { () throws(ImagingError) in
            try ThumbcacheCodecSupport.opened(name) {
                cpdf_open(file.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), file.bytes.count, Int32(clamping: page), &info, $0, $1)
            }
        }
        if case .failure = opened, page < 0 || (info.pages > 0 && page >= Int(info.pages)) {
            throw ImagingError(path: name, reason: .noSuchPage(page: page + 1, pages: Int(info.pages)))
        }
        document = try opened.get()
        var media = MediaMetadata()
        func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        media.title = text(info.title)
        media.authors = text(info.author).map { [$0] }
        media.creator = text(info.creator)
        media.pageCount = Int(info.pages)
        let valid = info.width.isFinite && info.height.isFinite && info.width >= 1 && info.height >= 1
        if valid {
            media.pageWidth = info.width
            media.pageHeight = info.height
        }
        // A page's size in points is its aspect ratio; one without a usable size is drawn as Letter.
        let w = valid ? min(1e6, info.width) : 612, h = valid ? min(1e6, info.height) : 792
        header = RowSourceHeader(width: max(1, Int(w.rounded())), height: max(1, Int(h.rounded())), hasAlpha: false, bitsPerSample: 8,
                                 colorSpace: "RGB", frameCount: Int(info.pages), media: media)
    }

    deinit { cpdf_close(document) }

    /// The words of every page, at most `limit` bytes of UTF-8.
    func text(limit: Int) throws(ImagingError) -> String {
        var bytes = [UInt8](repeating: 0, count: limit)
        var message = [CChar](repeating: 0, count: 256)
        let n = bytes.withUnsafeMutableBufferPointer { out in
            out.withMemoryRebound(to: CChar.self) { cpdf_text(document, $0.baseAddress, $0.count, &message, message.count) }
        }
        guard n >= 0 else {
            throw ImagingError(path: path, reason: .corrupt(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return String(decoding: bytes[..<n], as: UTF8.self)
    }

    func draw(width: Int, height: Int) throws(ImagingError) -> RGBABuffer {
        // cpdf_render copies poppler's whole page, or whitens the canvas first where poppler made it smaller.
        try .drawnAsARGB32(width: width, height: height, path: path, writesEveryPixel: true) {
            cpdf_render(document, Int32(width), Int32(height), $0, $1, $2)
        }
    }
}
