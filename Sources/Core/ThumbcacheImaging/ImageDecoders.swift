#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import ThumbcacheSync

/// One format's decoder: how its files are recognised and how one is opened.
package struct ImageDecoderRegistration: Sendable {
    package var format: ImageFormat
    /// The content type its files are (a uniform type identifier such as `public.png`).
    package var typeIdentifier: String
    /// Any one of these identifies the format.
    package var magic: [Magic]
    /// A test of the file's start for formats magic cannot tell; tried first.
    package var sniffer: FormatDeclaration.Sniffer?
    /// Opens the image on `descriptor` (read from its start; the caller keeps the descriptor);
    /// `name` says which file it is, in errors; the registry's settings say how it may decode.
    package var open: @Sendable (_ descriptor: Int32, _ name: String, _ settings: DecodeSettings) throws(ImagingError) -> any RowSource
    /// The format's words as plain text, for the full-text index: `limit` says when to stop
    /// reading (the registry cuts the result to it); nil for a format without words (a photo).
    package var extractText: (@Sendable (_ descriptor: Int32, _ name: String, _ limit: Int) throws(ImagingError) -> String)?
    /// Whether ``open`` draws the page ``DecodeSettings/page`` says (a PDF's); a file of another
    /// format has one page.
    package var hasPages = false
    /// Loads the library the decoder otherwise loads with dlopen at its first file; nil where its
    /// libraries are linked. A worker calls it before confining itself where Landlock could not
    /// let it load the library later, or where it was started for a file of this format and
    /// ``loadsWhatTheFileNeeds`` (not HEIF's: its codec is known inside the file) (SECURITY.md).
    package var loadLibrary: (@Sendable () -> Void)?
    package var loadsWhatTheFileNeeds = true

    /// This registration, drawing the page its settings name.
    package func drawingPages() -> ImageDecoderRegistration {
        var copy = self
        copy.hasPages = true
        return copy
    }

    /// This registration, with `load` loading its decoder's library before the first file.
    package func loadingLibrary(whatTheFileNeeds: Bool = true, _ load: @escaping @Sendable () -> Void) -> ImageDecoderRegistration {
        var copy = self
        copy.loadLibrary = load
        copy.loadsWhatTheFileNeeds = whatTheFileNeeds
        return copy
    }

    /// This registration with `extract` as its text extractor.
    package func extractingText(_ extract: @escaping @Sendable (_ descriptor: Int32, _ name: String,
                                                                _ limit: Int) throws(ImagingError) -> String) -> ImageDecoderRegistration {
        var copy = self
        copy.extractText = extract
        return copy
    }

    package init(format: ImageFormat, typeIdentifier: String, magic: [Magic],
                open: @escaping @Sendable (_ descriptor: Int32, _ name: String) throws(ImagingError) -> any RowSource) {
        self.format = format
        self.typeIdentifier = typeIdentifier
        self.magic = magic
        self.open = { (descriptor, name, _) throws(ImagingError) in try open(descriptor, name) }
    }

    /// The decoder for a format of thumbcache's catalogue (``FormatCatalogue``).
    package init(_ signature: FormatDeclaration,
                open: @escaping @Sendable (_ descriptor: Int32, _ name: String) throws(ImagingError) -> any RowSource) {
        self.init(signature) { (descriptor, name, _) throws(ImagingError) in try open(descriptor, name) }
    }

    /// A catalogued format's decoder that uses the registry's ``DecodeSettings``.
    package init(_ signature: FormatDeclaration,
                 open: @escaping @Sendable (_ descriptor: Int32, _ name: String, _ settings: DecodeSettings) throws(ImagingError) -> any RowSource) {
        format = signature.format
        typeIdentifier = signature.typeIdentifier
        magic = signature.magic
        sniffer = signature.sniffer
        self.open = open
    }
}

/// The decoders in use: a format is one registration and one file that implements ``RowSource``.
package struct ImageDecoders: Sendable {
    package private(set) var registrations: [ImageDecoderRegistration]

    /// Loads now every library a decoder here would load at its first file, and reads what
    /// ``preload`` reads (a worker confined without Landlock, which can open nothing later); or
    /// only what a file of `format` is decoded with (a worker started for one, before its confinement).
    package func loadLibraries(for format: ImageFormat? = nil) {
        for r in registrations where format == nil || (r.format == format && r.loadsWhatTheFileNeeds) { r.loadLibrary?() }
        if format == nil { preload?() }
    }
    /// What these decoders read from the file system beside libraries at their first use (the
    /// documents' fonts and iconv's tables), which Landlock lets a worker read then: read before
    /// the confinement only where it has no Landlock (``loadLibraries(for:)``).
    package var preload: (@Sendable () -> Void)?
    /// How these decoders may work (threads per decode); a worker sets it from its parent's word.
    package var settings = DecodeSettings()
    /// Bytes of a file's start that detection reads: enough for every registered magic.
    package private(set) var headLength: Int

    package init(_ registrations: [ImageDecoderRegistration]) {
        self.registrations = []
        headLength = 16
        for r in registrations { register(r) }
    }

    /// PNG (libpng) and JPEG (libjpeg-turbo).
    package static let standard = ImageDecoders([.png, .jpeg])

    /// Every catalogued format, for detection only: its decoders throw (what is not linked here
    /// is named in the error rather than called unknown).
    package static let catalogue = ImageDecoders(FormatCatalogue.all.map { signature in
        ImageDecoderRegistration(signature) { (_, name) throws(ImagingError) in
            throw ImagingError(path: name, reason: .decoderNotInProcess(format: signature.format.rawValue))
        }
    })

    /// Adds `registration`; it is tried before those already registered (so it may claim files
    /// another format's magic also matches).
    package mutating func register(_ registration: ImageDecoderRegistration) {
        registrations.removeAll { $0.format == registration.format }
        registrations.insert(registration, at: 0)
        headLength = max(headLength, registration.magic.map(\.span).max() ?? 0, registration.sniffer?.span ?? 0)
    }

    package func registration(of format: ImageFormat) -> ImageDecoderRegistration? {
        registrations.first { $0.format == format }
    }

    /// The format whose files are of the content type `typeIdentifier`, if one is registered.
    package func format(ofType typeIdentifier: String) -> ImageFormat? {
        registrations.first { $0.typeIdentifier == typeIdentifier }?.format
    }

    /// The format the first bytes of the file at `path` name; nil if they name none or it cannot
    /// be read. Needs no content types (which read shared-mime-info's database): what a process
    /// made for one file asks first.
    package func format(ofFileAt path: String) -> ImageFormat? {
        guard case .success(let fd) = retryingInterrupts({ Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }) else { return nil }
        defer { Glibc.close(fd) }
        return format(ofDescriptor: fd, name: path)
    }

    /// The same for a file open on `fd` (read from its start, its offset left alone).
    package func format(ofDescriptor fd: Int32, name: String) -> ImageFormat? {
        var head = [UInt8](repeating: 0, count: headLength)
        let count = (try? retryingInterrupts({ head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) } }).get()) ?? 0
        guard count > 0 else { return nil }
        return head.withUnsafeBytes { format(of: UnsafeRawBufferPointer(rebasing: $0[..<count]), name: name) }
    }

    /// The format whose magic `head` (a file's first bytes) has; a sniffer's yes first, then the
    /// most specific magic.
    package func format(of head: UnsafeRawBufferPointer, name: String? = nil) -> ImageFormat? {
        for r in registrations {
            if let sniffer = r.sniffer, !sniffer.needsExtension, sniffer.test(UnsafeRawBufferPointer(rebasing: head.prefix(sniffer.span))) {
                return r.format
            }
        }
        var best: (format: ImageFormat, weight: Int)?
        for r in registrations {
            for m in r.magic where m.weight > (best?.weight ?? 0) && m.matches(head) { best = (r.format, m.weight) }
        }
        if let best { return best.format }
        // Formats without a signature: the name's extension and a plausible header together.
        guard let name, let dot = name.lastIndex(of: ".") else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        for r in registrations {
            guard let sniffer = r.sniffer, sniffer.needsExtension, FormatCatalogue.declaration(of: r.format)?.extensions.contains(ext) ?? false
            else { continue }
            if sniffer.test(UnsafeRawBufferPointer(rebasing: head.prefix(sniffer.span))) { return r.format }
        }
        return nil
    }

    /// The registration for the file on `descriptor`, from its first bytes.
    /// - Throws: ``ImagingError`` if it cannot be read, is empty, or no decoder takes it.
    package func registration(for descriptor: Int32, name: String) throws(ImagingError) -> ImageDecoderRegistration {
        var head = [UInt8](repeating: 0, count: headLength)
        let n: Int
        switch retryingInterrupts({ head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) } }) {
        case .success(let count): n = count
        case .failure(let errno): throw ImagingError(path: name, reason: .unreadable(errno.description))
        }
        guard n > 0 else { throw ImagingError(path: name, reason: .empty) }
        let format = head.withUnsafeBytes { self.format(of: UnsafeRawBufferPointer(rebasing: $0[..<n]), name: name) }
        guard let format, let registration = registration(of: format) else {
            let known = head.withUnsafeBytes { ImageDecoders.catalogue.format(of: UnsafeRawBufferPointer(rebasing: $0[..<n]), name: name) }
            throw ImagingError(path: name, reason: known.map { .decoderNotInProcess(format: $0.rawValue) } ?? .unsupportedFormat)
        }
        return registration
    }

    /// Opens the image on `descriptor` with the decoder its bytes call for, or `format`'s if given.
    /// `fallback` is tried only when no decoder recognises the bytes: a format nothing in a
    /// file's bytes can name (text), whose decoder checks them itself.
    package func open(_ descriptor: Int32, name: String, format: ImageFormat? = nil,
                     fallback: ImageFormat? = nil, page: Int = 0) throws(ImagingError) -> (ImageFormat, any RowSource) {
        let registration = try resolve(descriptor, name: name, format: format, fallback: fallback)
        guard page == 0 || registration.hasPages else { throw ImagingError(path: name, reason: .noSuchPage(page: page + 1, pages: 1)) }
        var settings = settings
        settings.page = page
        return (registration.format, try registration.open(descriptor, name, settings))
    }

    /// The words of the file on `descriptor` as plain text, at most `limit` bytes of UTF-8, from
    /// the text extractor of the format its bytes call for (or `format`'s, or `fallback`'s as
    /// ``open(_:name:format:fallback:)`` picks).
    /// - Throws: ``ImagingError``, ``ImagingError/Reason/noTextExtractor(format:)`` for a format
    ///   whose decoder has none.
    package func text(_ descriptor: Int32, name: String, format: ImageFormat? = nil, fallback: ImageFormat? = nil,
                      limit: Int) throws(ImagingError) -> (ImageFormat, String) {
        let registration = try resolve(descriptor, name: name, format: format, fallback: fallback)
        guard let extract = registration.extractText else {
            throw ImagingError(path: name, reason: .noTextExtractor(format: registration.format.rawValue))
        }
        // The cap holds here, whatever an extractor returns; extractors use `limit` only to stop reading early.
        return (registration.format, Self.truncated(try extract(descriptor, name, max(0, limit)), toUTF8Bytes: max(0, limit)))
    }

    /// `text` cut to at most `limit` bytes of UTF-8, at a scalar's end.
    package static func truncated(_ text: String, toUTF8Bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: max(0, limit))
        // Back off continuation bytes (10xxxxxx): the cut falls where a scalar starts.
        while end > text.utf8.startIndex && text.utf8[end] & 0xC0 == 0x80 { end = text.utf8.index(before: end) }
        return String(decoding: text.utf8[..<end], as: UTF8.self)
    }

    /// The registration ``open(_:name:format:fallback:)`` and ``text(_:name:format:fallback:limit:)`` use.
    private func resolve(_ descriptor: Int32, name: String, format: ImageFormat?,
                         fallback: ImageFormat?) throws(ImagingError) -> ImageDecoderRegistration {
        let registration: ImageDecoderRegistration
        if let format, let known = self.registration(of: format) { registration = known } else {
            do {
                registration = try self.registration(for: descriptor, name: name)
            } catch where error.reason == .unsupportedFormat {
                if let fallback, let known = self.registration(of: fallback) {
                    registration = known
                } else if let wanted = format ?? fallback, ImageDecoders.catalogue.registration(of: wanted) != nil {
                    // Text, say, asked of a process that does not link its decoder.
                    throw ImagingError(path: name, reason: .decoderNotInProcess(format: wanted.rawValue))
                } else {
                    throw error
                }
            }
        }
        return registration
    }
}

extension ImageDecoderRegistration {
    /// BMP by a parser of our own: streamed by rows unless RLE.
    package static let bmp = ImageDecoderRegistration(.bmp) { (fd, name) throws(ImagingError) in try BMPSource(descriptor: fd, name: name) }
    /// ICO by a parser of our own: the largest image, PNG or DIB with its mask.
    package static let ico = ImageDecoderRegistration(.ico) { (fd, name) throws(ImagingError) in try ICOSource(descriptor: fd, name: name) }
    /// CUR, read as ICO.
    package static let cur = ImageDecoderRegistration(.cur) { (fd, name) throws(ImagingError) in try ICOSource(descriptor: fd, name: name) }
    /// Netpbm (PBM, PGM, PPM, PAM) by a parser of our own, streamed by rows.
    package static let pnm = ImageDecoderRegistration(.pnm) { (fd, name) throws(ImagingError) in try PNMSource(descriptor: fd, name: name) }
    /// TGA by a parser of our own: streamed by rows unless RLE.
    package static let tga = ImageDecoderRegistration(.tga) { (fd, name) throws(ImagingError) in try TGASource(descriptor: fd, name: name) }

    /// PNG through libpng: streamed row by row unless interlaced.
    package static let png = ImageDecoderRegistration(.png) { (fd, name) throws(ImagingError) in
        try PNGSource(descriptor: fd, name: name)
    }

    /// JPEG through libjpeg-turbo: DCT-scaled on load (1/2 … 1/8), streamed unless progressive;
    /// at 1/8 with two threads to spare, a sequential one's scan is decoded on both.
    package static let jpeg = ImageDecoderRegistration(.jpeg) { (fd, name, settings) throws(ImagingError) in
        try JPEGSource(descriptor: fd, name: name, threads: settings.threads)
    }
}

extension ImageDecoders {
    /// A JPEG in memory (a raw file's embedded preview), DCT-scaled on load like a file and read
    /// in place: `memory` must stay valid and unchanged for as long as the source lives.
    package static func jpeg(memory: UnsafeRawBufferPointer, name: String) throws(ImagingError) -> any RowSource {
        try JPEGSource(memory: memory, path: name)
    }

    /// A PNG or JPEG in memory (an audio file's cover, a document's stored thumbnail), told by
    /// its magic and read in place: `memory` must outlive the source.
    package static func picture(memory: UnsafeRawBufferPointer, name: String) throws(ImagingError) -> any RowSource {
        if FormatDeclaration.png.magic.contains(where: { $0.matches(memory) }) { return try PNGSource(memory: memory, name: name) }
        if FormatDeclaration.jpeg.magic.contains(where: { $0.matches(memory) }) { return try JPEGSource(memory: memory, path: name) }
        throw ImagingError(path: name, reason: .corrupt("the embedded picture is neither PNG nor JPEG"))
    }
}
