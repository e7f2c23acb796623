#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheImaging
import ThumbcacheSync

/// A file's bytes mapped read-only: compressed formats whose libraries parse from memory
/// (WebP, GIF, HEIF, SVG) read them as a view, never a copy. Unmapped when released.
///
/// A file that shrinks while mapped makes the next touched page raise SIGBUS: in the worker that
/// costs this one file (a crash the pool reports), which is the point of decoding there.
///
/// `@unchecked Sendable`: the mapping is read-only (`PROT_READ`) and fixed from `init` to `deinit`.
package final class MappedFile: @unchecked Sendable {
    package let bytes: UnsafeRawBufferPointer
    /// Files larger than this are refused before mapping: no image format here needs more.
    package static let maxBytes = 1 << 30

    package init(descriptor: Int32, name: String) throws(ImagingError) {
        var s = stat()
        guard fstat(descriptor, &s) == 0 else { throw ImagingError(path: name, reason: .unreadable(Errno.current.description)) }
        let size = Int(s.st_size)
        guard size > 0 else { throw ImagingError(path: name, reason: .empty) }
        guard size <= Self.maxBytes else {
            throw ImagingError(path: name, reason: .corrupt("file of \(size) bytes is larger than the \(Self.maxBytes >> 20) MiB this format may have"))
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED else {
            throw ImagingError(path: name, reason: .unreadable(Errno.current.description))
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }

    /// Drops the pages holding `range` from memory once they have been read (a library took its
    /// own copy): touched again, they are read again from the file. Pages shared with bytes
    /// around `range` go too, and come back the same way.
    package func release(_ range: Range<Int>) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = max(0, range.lowerBound) / page * page, end = min(bytes.count, range.upperBound)
        guard end > start, let base = bytes.baseAddress else { return }
        madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_DONTNEED)
    }
}

/// What a shim's opening call returns; when it returns nil, the message it wrote is the error for
/// `path`. (Every shim reports failures in a caller's 256-byte buffer.)
package func opened<T>(_ path: String, _ open: (_ message: UnsafeMutablePointer<CChar>, _ size: Int) -> T?) throws(ImagingError) -> T {
    var message = [CChar](repeating: 0, count: 256)
    guard let value = message.withUnsafeMutableBufferPointer({ open($0.baseAddress!, $0.count) }) else {
        throw ImagingError(path: path, reason: .corrupt(cText(message)))
    }
    return value
}

/// The TIFF structure inside an ISO-BMFF `Exif` item or box (HEIF, JPEG XL): it starts with a
/// 4-byte big-endian offset to the TIFF header.
package func exifTIFF(inBox box: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    guard box.count > 4 else { return nil }
    let offset = Int(box[0]) << 24 | Int(box[1]) << 16 | Int(box[2]) << 8 | Int(box[3])
    guard 4 + offset < box.count else { return nil }
    return Array(box[(4 + offset)...])
}

/// A fixed C character array (a struct's `char name[32]`, imported as a tuple) up to its first
/// NUL, as UTF-8; nil when empty.
package func cString<T>(tuple: T) -> String? {
    var copy = tuple
    let s = withUnsafeBytes(of: &copy) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return s.isEmpty ? nil : s
}

/// A source drawn whole at the size the planner asks (SVG, PDF, a page of text, a font's
/// sample): `draw` fills a buffer once, and the rows are read from it.
package protocol DrawnSource: ScalableRowSource {
    /// The whole picture at `width × height`.
    func draw(width: Int, height: Int) throws(ImagingError) -> RGBABuffer
    /// What `draw` made, until its rows are read.
    var output: RGBABuffer { get set }
}

extension DrawnSource {
    package func start(width: Int, height: Int) throws(ImagingError) -> (width: Int, height: Int) {
        output = try draw(width: width, height: height)
        return (width, height)
    }

    package func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        output.drain(sink)
    }

    package func takeRows() -> [UInt8]? {
        defer { output = RGBABuffer() }
        return output.pixels
    }
}

/// Rows held whole (a decoder that fills a buffer), fed top to bottom.
package struct RGBABuffer {
    package var width = 0
    package var height = 0
    package var pixels: [UInt8] = []

    package init() {}

    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// A canvas whose bytes are left as they come: for a renderer that writes every one.
    private init(unfilledWidth width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { _, initialized in initialized = width * height * 4 }
    }

    /// A `width × height` canvas a C renderer fills (`draw` gets the pixels and a message buffer
    /// and returns 0, or non-zero with the message set, which becomes the error for `path`). A
    /// renderer that draws on what is there gets transparent black; one that `writesEveryPixel`
    /// (poppler's page, ctext's page and sample) gets the bytes unzeroed: a page at 1024 px is megabytes.
    package static func drawn(width: Int, height: Int, path: String, writesEveryPixel: Bool = false,
                      _ draw: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<CChar>, Int) -> Int32) throws(ImagingError) -> RGBABuffer {
        var canvas = writesEveryPixel ? RGBABuffer(unfilledWidth: width, height: height) : RGBABuffer(width: width, height: height)
        var message = [CChar](repeating: 0, count: 256)
        let status = canvas.pixels.withUnsafeMutableBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { draw(pixels.baseAddress, $0.baseAddress!, $0.count) }
        }
        guard status == 0 else { throw ImagingError(path: path, reason: .corrupt(cText(message))) }
        return canvas
    }

    /// ``drawn(width:height:path:_:)`` into premultiplied ARGB in native-endian 32-bit words, as
    /// cairo (librsvg) and poppler's Splash leave it: made straight RGBA in place.
    package static func drawnAsARGB32(width: Int, height: Int, path: String, writesEveryPixel: Bool = false,
                             _ draw: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<CChar>, Int) -> Int32) throws(ImagingError) -> RGBABuffer {
        var canvas = try drawn(width: width, height: height, path: path, writesEveryPixel: writesEveryPixel, draw)
        canvas.pixels.withUnsafeMutableBytes { bytes in bytes.withMemoryRebound(to: UInt32.self) { words in
            // Every word as if opaque (red and blue swapped: native ARGB to R, G, B, A bytes), a
            // loop without branches that the compiler vectorizes; nonzero `translucent` means
            // some alpha is neither 0 nor 255 (a page is opaque; a drawing's edges are not).
            var translucent: UInt32 = 0
            for i in words.indices {
                let word = words[i]
                words[i] = word & 0xFF00_FF00 | word >> 16 & 0xFF | (word & 0xFF) << 16
                translucent |= ((word >> 24) &+ 1) & 0xFF & ~1
            }
            guard translucent != 0 else { return }
            for i in words.indices {
                let word = words[i], a = word >> 24
                guard a != 0, a != 255 else { continue }
                func straight(_ c: UInt32) -> UInt32 { min(255, (c * 255 + a / 2) / a) }
                words[i] = a << 24 | straight(word >> 16 & 0xFF) << 16 | straight(word >> 8 & 0xFF) << 8 | straight(word & 0xFF)
            }
        } }
        return canvas
    }

    /// Feeds every row to `sink`, then lets the pixels go (a source's rows are read once).
    package mutating func drain(_ sink: (UnsafePointer<UInt8>) -> Void) {
        pixels.withUnsafeBufferPointer { p in
            for y in 0..<height { sink(p.baseAddress! + y * width * 4) }
        }
        self = RGBABuffer()
    }
}

/// Feeds `height` rows of interleaved 8-bit pixels of 3 (RGB) or 4 (RGBA) channels, `stride`
/// bytes apart, to `sink` as RGBA rows: RGBA ones as they are, RGB ones widened (opaque) through
/// one row buffer, so a whole RGB image is never held a second time as RGBA.
package func sinkInterleaved(_ pixels: UnsafePointer<UInt8>, stride: Int, channels: Int, width: Int, height: Int,
                             _ sink: (UnsafePointer<UInt8>) -> Void) {
    if channels == 4 {
        for y in 0..<height { sink(pixels + y * stride) }
        return
    }
    let row = UnsafeMutablePointer<UInt8>.allocate(capacity: width * 4)
    defer { row.deallocate() }
    row.initialize(repeating: 255, count: width * 4)
    for y in 0..<height {
        let from = pixels + y * stride
        for x in 0..<width { for c in 0..<channels { row[x * 4 + c] = from[x * channels + c] } }
        sink(row)
    }
}
