#if canImport(Glibc)
import Glibc
#endif
import CThumbcacheText
import Synchronization
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// Text of every kind through FreeType: the first lines on a page (a later page: the lines
    /// after it); its words, HTML's without markup.
    package static let text = ImageDecoderRegistration(.plainText) { (fd, name, settings) throws(ImagingError) in
        try TextSource(descriptor: fd, name: name, page: settings.page)
    }.drawingPages().extractingText { (fd, name, limit) throws(ImagingError) in
        try TextExtraction.words(descriptor: fd, name: name, limit: limit)
    }.loadingLibrary { _ = ctext_load() }
}

/// A text file as QuickLook draws one: a white page (Letter's shape) with its first lines in a
/// monospaced font (DejaVu Sans Mono, FreeType), tabs expanded and long lines clipped. Only the
/// first 64 KiB are read, by `pread`: a 2 GB log costs what a short note does. Page N (a
/// preview's) starts ``linesPerPage`` × N lines in, read from at most the first ``pagedReadLimit`` bytes.
final class TextSource: DrawnSource {
    /// The page's grid: columns across; as many lines as the page's height fits (about 44).
    static let columns = 64
    static let maxLines = 80
    static let tabWidth = 8
    /// Bytes read from the file's start.
    static let readLimit = 64 << 10
    /// A later page begins this many lines after the one before: a little under the 44 a page
    /// holds at any size, so a page's last lines open the next and none is skipped.
    static let linesPerPage = 40
    /// The most a later page reads: past it, a text's pages are not counted.
    static let pagedReadLimit = 8 << 20

    private let path: String
    private let lines: TextLines
    let header: RowSourceHeader
    var output = RGBABuffer()

    convenience init(descriptor: Int32, name: String, page: Int = 0) throws(ImagingError) {
        let reader = try ByteReader(descriptor: descriptor, name: name)
        let limit = page == 0 ? Self.readLimit : min(Self.pagedReadLimit, Self.readLimit * (page + 1))
        try self.init(text: try reader.bytes(at: 0, count: min(reader.size, limit), what: "text"), name: name, page: page)
    }

    /// Page `page` of `bytes`, a text in any encoding ``Charset`` tells. With `media`, the page is
    /// a document's words (DocumentPages): its header carries the document's title and authors
    /// and no picture format.
    init(text bytes: [UInt8], name: String, page: Int, media: MediaMetadata? = nil) throws(ImagingError) {
        path = name
        let skip = page * Self.linesPerPage
        guard let lines = bytes.withUnsafeBytes({ TextLines($0, maxLines: Self.maxLines, columns: Self.columns, tabWidth: Self.tabWidth, skip: skip) })
        else { throw ImagingError(path: name, reason: .corrupt("binary data, not text")) }
        guard page == 0 || lines.seen > skip else {
            // Counted in what was read: the whole text unless it is longer than the paged limit.
            let pages = max(1, (lines.seen + Self.linesPerPage - 1) / Self.linesPerPage)
            throw ImagingError(path: name, reason: .noSuchPage(page: page + 1, pages: pages))
        }
        self.lines = lines
        // Letter at 100 per inch: the page's shape, drawn at whatever size the box asks.
        header = media.map { RowSourceHeader(width: 850, height: 1100, hasAlpha: false, media: $0) }
            ?? RowSourceHeader(width: 850, height: 1100, hasAlpha: false, bitsPerSample: 8, colorSpace: "RGB")
    }

    func draw(width: Int, height: Int) throws(ImagingError) -> RGBABuffer {
        guard let font = PageFont.monospaced else {
            throw ImagingError(path: path, reason: .corrupt("no monospaced font to draw text with (install fonts-dejavu-core)"))
        }
        let fallback = PageFont.fallback?.file.bytes
        return try Self.pageFace.withLock { (face: inout FontFace?) throws(ImagingError) -> RGBABuffer in
            if face == nil { face = try FontFace(font.file.bytes, name: font.path) }
            let page = face!.face
            // ctext_draw_page whitens the whole canvas first.
            return try .drawn(width: width, height: height, path: path, writesEveryPixel: true) { pixels, message, size in
                lines.scalars.withUnsafeBufferPointer { text in
                    lines.lengths.withUnsafeBufferPointer { lengths in
                        ctext_draw_page(page, fallback?.baseAddress?.assumingMemoryBound(to: UInt8.self), fallback?.count ?? 0,
                                        text.baseAddress, lengths.baseAddress, Int32(lengths.count), Int32(Self.columns),
                                        pixels, Int32(width), Int32(height), message, size)
                    }
                }
            }
        }
    }

    /// The monospaced face, parsed once per process and kept with its glyphs of the last page size
    /// (FreeType's faces are not shared between threads: one page is drawn at a time). Parsing it
    /// and loading and hinting the same glyphs for every page was most of a page's drawing.
    private static let pageFace = Mutex<FontFace?>(nil)
}

/// The first lines of a text (after `skip` of them), as Unicode scalars laid end to end, in the
/// encoding ``Charset/forEachScalar(_:_:)`` tells. Nil for bytes that are not text.
struct TextLines {
    var scalars: [UInt32] = []
    var lengths: [Int32] = []
    /// Lines met, the skipped ones too.
    private(set) var seen = 0

    init?(_ bytes: UnsafeRawBufferPointer, maxLines: Int, columns: Int, tabWidth: Int, skip: Int = 0) {
        var line: [UInt32] = []
        var column = 0
        var previous: UInt32 = 0
        func endLine() {
            if seen >= skip {
                scalars += line
                lengths.append(Int32(line.count))
            }
            seen += 1
            line.removeAll(keepingCapacity: true)
            column = 0
        }
        func put(_ c: UInt32) {
            if column < columns { line.append(c) }
            column += 1
        }
        // One scalar of the text: nil for a sign of binary data, else whether more lines are wanted.
        func take(_ c: UInt32) -> Bool? {
            defer { previous = c }
            switch c {
            case 0: return nil
            case 0x0A: if previous != 0x0D { endLine() }
            case 0x0D, 0x0C, 0x0B, 0x2028, 0x2029: endLine()
            case 0x09:
                let next = (column / tabWidth + 1) * tabWidth
                while column < next { put(0x20) }
            case 0xFEFF where seen == 0 && line.isEmpty: break  // a byte-order mark
            case 0..<0x20, 0x7F, 0x80..<0xA0: break  // control characters draw nothing
            default: put(c)
            }
            return lengths.count < maxLines
        }
        guard Charset.forEachScalar(bytes, take) else { return nil }
        if !line.isEmpty || seen == 0 { endLine() }
    }
}

/// A FreeType face over bytes that outlive it (FreeType reads them in place).
final class FontFace {
    let face: OpaquePointer
    let info: ctext_info

    init(_ bytes: UnsafeRawBufferPointer, index: Int = 0, name: String) throws(ImagingError) {
        var info = ctext_info()
        face = try opened(name) { ctext_open(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, index, &info, $0, $1) }
        self.info = info
    }

    deinit { ctext_close(face) }
}

/// A font text pages are drawn in: the first of its usual places that holds it, mapped once per
/// process. The worker maps it before it confines itself (``preloadFonts()``), so text draws
/// where Landlock is missing and no file may be opened; mapped rather than read, its pages stay in
/// the page cache, shared by the workers, and a font a page does not use is never touched.
struct PageFont: Sendable {
    let path: String
    let file: MappedFile

    /// DejaVu Sans Mono, where Debian (fonts-dejavu-core), Fedora and Arch put it.
    static let monospaced = first(of: ["/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", "/usr/share/fonts/dejavu-sans-mono-fonts/DejaVuSansMono.ttf",
                                       "/usr/share/fonts/dejavu/DejaVuSansMono.ttf", "/usr/share/fonts/TTF/DejaVuSansMono.ttf"])

    /// For the characters DejaVu Sans Mono lacks (Chinese, Japanese, Korean): Droid Sans Fallback,
    /// where Debian (fonts-droid-fallback, Apache 2.0) and Fedora (google-droid-sans-fonts) put it.
    static let fallback = first(of: ["/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
                                     "/usr/share/fonts/google-droid-sans-fonts/DroidSansFallbackFull.ttf"])

    private static func first(of candidates: [String]) -> PageFont? {
        for path in candidates {
            guard let file = try? ImageFile(path: path), let mapped = try? MappedFile(descriptor: file.descriptor, name: path),
                  mapped.bytes.count < 32 << 20 else { continue }
            return PageFont(path: path, file: mapped)
        }
        return nil
    }
}

/// Reads the text pages' fonts and iconv's tables (poppler's words): what the documents'
/// decoders need from the file system, before a confinement that would not let them read it
/// later (``ImageDecoders/preload``).
package func preloadFonts() {
    _ = PageFont.monospaced
    _ = PageFont.fallback
    // poppler's C++ binding turns a page's text into UTF-16 with iconv, which reads glibc's
    // gconv configuration on first use: read it now, while the file system is still open to us.
    let conversion = iconv_open("UTF-16", "UTF-8")
    if conversion != iconv_t(bitPattern: -1) { iconv_close(conversion) }
}
