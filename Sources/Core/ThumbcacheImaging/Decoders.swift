import CThumbcacheJPEG
import CThumbcachePNG

/// A PNG being decoded: header first, then rows.
final class PNGSource: RowSource {
    let path: String
    let decoder: OpaquePointer
    let info: cpng_info
    let exif: [UInt8]?

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        var info = cpng_info()
        var status = CPNG_OK
        var message = [CChar](repeating: 0, count: 256)
        guard let d = cpng_open_fd(descriptor, &info, &status, &message, message.count) else {
            let text = cText(message)
            switch status {
            case CPNG_IO: throw ImagingError(path: name, reason: .unreadable(text))
            default: throw ImagingError(path: name, reason: .corrupt(text))
            }
        }
        decoder = d
        self.info = info
        exif = info.exif.map { Array(UnsafeBufferPointer(start: $0, count: info.exif_length)) }
    }

    /// A PNG in memory, read in place: `memory` must outlive the source. `throughLibpng` skips
    /// thumbcache's own reader: the reference its tests compare with.
    init(memory: UnsafeRawBufferPointer, name: String, throughLibpng: Bool = false) throws(ImagingError) {
        path = name
        var info = cpng_info()
        var status = CPNG_OK
        var message = [CChar](repeating: 0, count: 256)
        let open = throughLibpng ? cpng_open_memory_libpng : cpng_open_memory
        guard let d = open(memory.baseAddress?.assumingMemoryBound(to: UInt8.self), memory.count, &info, &status,
                           &message, message.count) else {
            throw ImagingError(path: name, reason: .corrupt(cText(message)))
        }
        decoder = d
        self.info = info
        exif = info.exif.map { Array(UnsafeBufferPointer(start: $0, count: info.exif_length)) }
    }

    deinit { cpng_close(decoder) }

    var width: Int { Int(info.width) }
    var height: Int { Int(info.height) }
    var hasAlpha: Bool { info.has_alpha != 0 }
    var interlaced: Bool { info.interlaced != 0 }
    /// Whether thumbcache's own reader decodes this file rather than libpng.
    var usesOwnReader: Bool { cpng_uses_own_reader(decoder) != 0 }

    var header: RowSourceHeader {
        RowSourceHeader(width: width, height: height, hasAlpha: hasAlpha, exif: exif, maxShrink: 1, buffered: interlaced,
                        bufferedBytes: interlaced ? width * height * 4 : 0, bitsPerSample: Int(info.bit_depth),
                        colorSpace: info.color_type == 3 ? "Palette" : info.color_type & 2 != 0 ? "RGB" : "Gray")
    }

    private func fail() -> ImagingError {
        ImagingError(path: path, reason: .corrupt(String(cString: cpng_message(decoder))))
    }

    /// libpng cannot shrink on load: rows come at full size whatever `shrink` says.
    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        guard cpng_start(decoder) == CPNG_OK else { throw fail() }
        return (width, height)
    }

    /// Feeds every row, in order, to `sink`. Interlaced images are decoded whole first.
    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let stride = width * 4
        if interlaced {
            var image = [UInt8](repeating: 0, count: stride * height)
            let ok = image.withUnsafeMutableBufferPointer { buffer in
                var rows = (0..<height).map { Optional(buffer.baseAddress! + $0 * stride) }
                return cpng_read_image(decoder, &rows) == CPNG_OK
            }
            guard ok else { throw fail() }
            image.withUnsafeBufferPointer { b in
                for y in 0..<height { sink(b.baseAddress! + y * stride) }
            }
            return
        }
        var row = [UInt8](repeating: 0, count: stride)
        for _ in 0..<height {
            let ok = row.withUnsafeMutableBufferPointer { cpng_read_row(decoder, $0.baseAddress) == CPNG_OK }
            guard ok else { throw fail() }
            row.withUnsafeBufferPointer { sink($0.baseAddress!) }
        }
    }
}

/// A JPEG being decoded: header first, then (scaled) rows.
final class JPEGSource: RowSource {
    let path: String
    let decoder: OpaquePointer
    let info: cjpeg_info
    let exif: [UInt8]?
    /// The movie appended to the photo, when its XMP claims one and the bytes agree.
    private(set) var motionPhoto: MotionPhoto?
    private(set) var outputWidth = 0
    private(set) var outputHeight = 0
    /// libjpeg's decode of a progressive image refused over this many pixels (0: any).
    private var wholeImageLimit = 0
    /// Keeps in-memory bytes alive for a decoder reading from memory.
    private let bytes: [UInt8]?
    /// At 1/8 a sequential image may be decoded on two threads (eighth_split.c).
    private let twoThreads: Bool

    init(descriptor: Int32, name: String, threads: Int = 1) throws(ImagingError) {
        path = name
        bytes = nil
        twoThreads = threads > 1
        var info = cjpeg_info()
        var status = CJPEG_OK
        var message = [CChar](repeating: 0, count: 256)
        guard let d = cjpeg_open_fd(descriptor, &info, &status, &message, message.count) else {
            let text = cText(message)
            switch status {
            case CJPEG_IO: throw ImagingError(path: name, reason: .unreadable(text))
            default: throw ImagingError(path: name, reason: .corrupt(text))
            }
        }
        decoder = d
        self.info = info
        exif = info.exif.map { Array(UnsafeBufferPointer(start: $0, count: info.exif_length)) }
        // The XMP's claim, else a Samsung trailer's: a read of the file's last 8 bytes for most JPEGs.
        motionPhoto = MotionPhoto.find(xmp: info.xmp.map { UnsafeRawBufferPointer(start: $0, count: info.xmp_length) }, descriptor: descriptor)
    }

    /// A JPEG held in memory; `path` names where it came from, for errors.
    init(bytes: [UInt8], path: String, threads: Int = 1) throws(ImagingError) {
        self.path = path
        self.bytes = bytes
        twoThreads = threads > 1
        (decoder, info) = try bytes.withUnsafeBytes { b in Result { () throws(ImagingError) in try Self.open(b, path: path) } }.get()
        exif = nil
    }

    /// A JPEG in memory that the caller keeps, unchanged, for as long as this source lives (a
    /// raw file's preview in LibRaw's buffer): decoded in place, not copied.
    init(memory: UnsafeRawBufferPointer, path: String) throws(ImagingError) {
        self.path = path
        bytes = nil
        twoThreads = false
        (decoder, info) = try Self.open(memory, path: path)
        exif = nil
    }

    private static func open(_ memory: UnsafeRawBufferPointer, path: String) throws(ImagingError) -> (OpaquePointer, cjpeg_info) {
        var info = cjpeg_info()
        var status = CJPEG_OK
        var message = [CChar](repeating: 0, count: 256)
        let start = memory.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard let d = cjpeg_open_memory(start, memory.count, &info, &status, &message, message.count) else {
            throw ImagingError(path: path, reason: .corrupt(cText(message)))
        }
        return (d, info)
    }

    deinit { cjpeg_close(decoder) }

    var width: Int { Int(info.width) }
    var height: Int { Int(info.height) }
    var progressive: Bool { info.progressive != 0 }

    /// Progressive JPEG: libjpeg keeps every coefficient, up to 6 bytes per pixel; at 1/8 the
    /// shim keeps 3 bytes a block of the kinds it decodes itself.
    var header: RowSourceHeader {
        var media: MediaMetadata?
        if let motionPhoto {
            media = MediaMetadata()
            media?.motionPhoto = motionPhoto
        }
        var header = RowSourceHeader(width: width, height: height, hasAlpha: false, exif: exif, maxShrink: 8, buffered: progressive,
                                     bufferedBytes: progressive ? width * height * 6 : 0, bitsPerSample: 8,
                                     colorSpace: info.components == 1 ? "Gray" : info.components == 4 ? "CMYK" : "RGB", media: media)
        if progressive, info.eighth != 0 { header.bufferedAtEighth = Int(clamping: info.eighth_bytes) }
        return header
    }

    /// After start: 0 where libjpeg decodes, 1 where the shim does, 2 where it did on two threads.
    var decodedBy: Int { Int(cjpeg_decoded_by(decoder)) }

    func limitWholeImageDecode(toPixels pixels: Int) {
        wholeImageLimit = max(0, pixels)
        cjpeg_limit_whole_image(decoder, UInt64(wholeImageLimit))
    }

    private func fail() -> ImagingError {
        ImagingError(path: path, reason: .corrupt(String(cString: cjpeg_message(decoder))))
    }

    /// Starts decoding at 1/`shrink` scale (1, 2, 4 or 8: libjpeg's DCT scaling); `fast` when the
    /// result will be shrunk at least 2× more (fast IDCT, merged upsampling).
    @discardableResult
    func start(shrink: Int, fast: Bool = false) throws(ImagingError) -> (width: Int, height: Int) {
        try start(shrink: shrink, fast: fast, libjpegOnly: false)
    }

    /// As `start(shrink:fast:)`. At 1/8 the shim decodes what it can itself (libjpeg's pixels, from
    /// a fraction of the work); `libjpegOnly` asks for libjpeg's decoder, the reference it is held to.
    @discardableResult
    func start(shrink: Int, fast: Bool, libjpegOnly: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        var w: UInt32 = 0, h: UInt32 = 0
        let flags = (fast ? Int32(CJPEG_START_FAST) : 0) | (libjpegOnly ? Int32(CJPEG_START_LIBJPEG) : 0)
            | (twoThreads ? Int32(CJPEG_START_TWO_THREADS) : 0)
        switch cjpeg_start(decoder, Int32(shrink), flags, &w, &h) {
        case CJPEG_OK: break
        case CJPEG_TOO_LARGE:
            throw ImagingError(path: path, reason: .tooLarge(width: info.width, height: info.height, limit: wholeImageLimit))
        default: throw fail()
        }
        outputWidth = Int(w)
        outputHeight = Int(h)
        return (outputWidth, outputHeight)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        var row = [UInt8](repeating: 0, count: outputWidth * 4)
        for _ in 0..<outputHeight {
            let ok = row.withUnsafeMutableBufferPointer { cjpeg_read_row(decoder, $0.baseAddress) == CJPEG_OK }
            guard ok else { throw fail() }
            row.withUnsafeBufferPointer { sink($0.baseAddress!) }
        }
        guard cjpeg_finish(decoder) == CJPEG_OK else { throw fail() }
    }
}

/// The text of a NUL-terminated C buffer (a shim's message).
package func cText(_ buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
