#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheSync

/// Image formats thumbcache decodes, told apart by their first bytes, never by file name.
public enum ImageFormat: String, Sendable, Hashable {
    case png
    case jpeg

    /// The leading bytes that identify the format.
    public var signature: [UInt8] {
        switch self {
        case .png: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        case .jpeg: [0xFF, 0xD8, 0xFF]
        }
    }

    /// The format of `bytes` (the start of a file), or nil.
    public static func detect(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        [ImageFormat.png, .jpeg].first { bytes.starts(with: $0.signature) }
    }

    /// The format of the file at `path`.
    /// - Throws: ``ImagingError`` if it cannot be read, is empty, or is neither PNG nor JPEG.
    public static func detect(fileAt path: some FileLocation) throws(ImagingError) -> ImageFormat {
        let path = path.fileSystemPath
        let fd: Int32
        switch retryingInterrupts({ open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }) {
        case .success(let opened): fd = opened
        case .failure(let errno): throw ImagingError(path: path, reason: .unreadable(errno.description))
        }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 16)
        let n: Int
        switch retryingInterrupts({ head.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }) {
        case .success(let count): n = count
        case .failure(let errno): throw ImagingError(path: path, reason: .unreadable(errno.description))
        }
        guard n > 0 else { throw ImagingError(path: path, reason: .empty) }
        guard let format = head.withUnsafeBytes({ detect(UnsafeRawBufferPointer(rebasing: $0[..<n])) }) else {
            throw ImagingError(path: path, reason: .unsupportedFormat)
        }
        return format
    }
}

/// How many pixels a decoder may take on, checked from the header before any pixel memory exists.
public struct DecodeLimits: Sendable, Hashable {
    /// Most pixels (width × height) of an image decoded row by row. Memory for those grows with
    /// the width, not the height, so the default is generous: 512 MP (a 20000×20000 PNG streams;
    /// 65000×65000 is refused).
    public var maxPixels: Int
    /// Most pixels of an image that must be held whole while decoding: interlaced PNG (every
    /// pass refines the whole image) and progressive JPEG (libjpeg keeps every coefficient).
    /// Default 64 MP: at most 256 MB of RGBA, or about 200 MB of coefficients.
    public var maxBufferedPixels: Int

    public init(maxPixels: Int = 512 << 20, maxBufferedPixels: Int = 64 << 20) {
        self.maxPixels = maxPixels
        self.maxBufferedPixels = maxBufferedPixels
    }
}
