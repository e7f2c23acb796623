#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheSync

/// Reads of a descriptor for the small parsers of our own (BMP, ICO, PNM, TGA): positioned reads
/// of exact sizes, and a buffered forward cursor for formats read as a stream (ASCII PNM, RLE).
/// Every read is bounded; a short read is a truncated file. The other decoders' modules use it
/// for what they read whole (a text file's start, the font text is drawn in).
package struct ByteReader {
    package let descriptor: Int32
    package let name: String
    /// The file's size, taken when opened: offsets past it are refused before reading.
    package let size: Int

    package init(descriptor: Int32, name: String) throws(ImagingError) {
        var s = stat()
        guard fstat(descriptor, &s) == 0 else { throw ImagingError(path: name, reason: .unreadable(Errno.current.description)) }
        self.descriptor = descriptor
        self.name = name
        size = Int(s.st_size)
        guard size > 0 else { throw ImagingError(path: name, reason: .empty) }
    }

    func truncated(_ what: String) -> ImagingError { ImagingError(path: name, reason: .corrupt("truncated \(what)")) }
    func corrupt(_ what: String) -> ImagingError { ImagingError(path: name, reason: .corrupt(what)) }

    /// Exactly `count` bytes at `offset` into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, what: String) throws(ImagingError) {
        guard offset >= 0, buffer.count <= size, offset <= size - buffer.count else { throw truncated(what) }
        switch readFully(descriptor, into: buffer, at: offset) {
        case .success(let n) where n == buffer.count: return
        case .success: throw truncated(what)
        case .failure(let errno): throw ImagingError(path: name, reason: .unreadable(errno.description))
        }
    }

    /// Fills `array` (its whole length) from `offset`.
    func read(into array: inout [UInt8], at offset: Int, what: String) throws(ImagingError) {
        try array.withUnsafeMutableBytes { b in Result { () throws(ImagingError) in try read(into: b, at: offset, what: what) } }.get()
    }

    /// `count` bytes at `offset` as an array (headers, palettes: small by construction).
    package func bytes(at offset: Int, count: Int, what: String) throws(ImagingError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        try read(into: &out, at: offset, what: what)
        return out
    }
}

/// A forward cursor over a file with a 64 KiB window, for data that must be read in order.
struct ByteStream {
    let reader: ByteReader
    private(set) var offset: Int
    private var window = [UInt8](repeating: 0, count: 64 << 10)
    private var start = 0
    private var end = 0

    init(_ reader: ByteReader, at offset: Int) {
        self.reader = reader
        self.offset = offset
    }

    /// The next byte, or nil at the end of the file.
    mutating func next() throws(ImagingError) -> UInt8? {
        if start == end {
            guard offset < reader.size else { return nil }
            let n = min(window.count, reader.size - offset)
            if n < window.count { window = [UInt8](repeating: 0, count: n) }
            try reader.read(into: &window, at: offset, what: "data")
            start = 0
            end = n
        }
        defer {
            start += 1
            offset += 1
        }
        return window[start]
    }

    /// The next byte; the end of the file is a truncation.
    mutating func byte(_ what: String) throws(ImagingError) -> UInt8 {
        guard let b = try next() else { throw reader.truncated(what) }
        return b
    }

    /// The next `count` bytes into `out`, copied from the window a stretch at a time; the end of
    /// the file is a truncation.
    mutating func take(_ count: Int, into out: UnsafeMutablePointer<UInt8>, _ what: String) throws(ImagingError) {
        var done = 0
        while done < count {
            if start == end {
                guard let b = try next() else { throw reader.truncated(what) }
                out[done] = b
                done += 1
                continue
            }
            let n = min(count - done, end - start)
            window.withUnsafeBufferPointer { (out + done).update(from: $0.baseAddress! + start, count: n) }
            start += n
            offset += n
            done += n
        }
    }
}

/// One row of BGR (3 bytes a pixel) or BGRA (4) samples into RGBA at `base` of `row`, the layout
/// BMP and TGA store true colour in; `alpha` false makes the row opaque whatever a fourth byte says.
func copyBGR(_ raw: [UInt8], into row: inout [UInt8], at base: Int = 0, width: Int, bytesPerPixel step: Int, alpha: Bool) {
    let keepAlpha = alpha && step == 4
    raw.withUnsafeBufferPointer { s in
        row.withUnsafeMutableBufferPointer { d in
            for x in 0..<width {
                let i = x * step, o = base + x * 4
                d[o] = s[i + 2]
                d[o + 1] = s[i + 1]
                d[o + 2] = s[i]
                d[o + 3] = keepAlpha ? s[i + 3] : 255
            }
        }
    }
}

extension Array where Element == UInt8 {
    func le16(_ o: Int) -> Int { Int(self[o]) | Int(self[o + 1]) << 8 }
    func le32(_ o: Int) -> Int { le16(o) | le16(o + 2) << 16 }
    /// A signed little-endian 32-bit value.
    func le32s(_ o: Int) -> Int { Int(Int32(bitPattern: UInt32(le32(o)))) }
}
