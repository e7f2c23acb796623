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
final class MappedFile {
    let bytes: UnsafeRawBufferPointer
    /// Files larger than this are refused before mapping: no image format here needs more.
    static let maxBytes = 1 << 30

    init(descriptor: Int32, name: String) throws(ImagingError) {
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
}

/// The TIFF structure inside an ISO-BMFF `Exif` item or box (HEIF, JPEG XL): it starts with a
/// 4-byte big-endian offset to the TIFF header.
func exifTIFF(inBox box: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    guard box.count > 4 else { return nil }
    let offset = Int(box[0]) << 24 | Int(box[1]) << 16 | Int(box[2]) << 8 | Int(box[3])
    guard 4 + offset < box.count else { return nil }
    return Array(box[(4 + offset)...])
}

/// A fixed C character array (a struct's `char name[32]`, imported as a tuple) up to its first
/// NUL, as UTF-8; nil when empty.
func cString<T>(tuple: T) -> String? {
    var copy = tuple
    let s = withUnsafeBytes(of: &copy) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return s.isEmpty ? nil : s
}

/// Rows held whole (a decoder that fills a buffer), fed top to bottom.
struct RGBABuffer {
    var width = 0
    var height = 0
    var pixels: [UInt8] = []

    init() {}

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// A `width × height` canvas a C renderer fills (`draw` gets the pixels and a message buffer
    /// and returns 0, or non-zero with the message set, which becomes the error for `path`).
    static func drawn(width: Int, height: Int, path: String,
                      _ draw: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<CChar>, Int) -> Int32) throws(ImagingError) -> RGBABuffer {
        var canvas = RGBABuffer(width: width, height: height)
        var message = [CChar](repeating: 0, count: 256)
        let status = canvas.pixels.withUnsafeMutableBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { draw(pixels.baseAddress, $0.baseAddress!, $0.count) }
        }
        guard status == 0 else { throw ImagingError(path: path, reason: .corrupt(cText(message))) }
        return canvas
    }

    /// Feeds every row to `sink`, then lets the pixels go (a source's rows are read once).
    mutating func drain(_ sink: (UnsafePointer<UInt8>) -> Void) {
        pixels.withUnsafeBufferPointer { p in
            for y in 0..<height { sink(p.baseAddress! + y * width * 4) }
        }
        self = RGBABuffer()
    }
}
