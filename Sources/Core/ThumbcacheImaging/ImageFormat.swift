#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheSync

/// An image format a decoder is registered for, told apart by its bytes, never by file name.
///
/// A struct, not an enum: a format is declared once in ``FormatCatalogue`` (or by an app's own
/// ``ImageDecoderRegistration``), not in every switch.
package struct ImageFormat: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }

    package static let png = ImageFormat(rawValue: "png")
    package static let jpeg = ImageFormat(rawValue: "jpeg")
    // The other catalogued formats: beside their entries in Catalogue/.

    package var description: String { rawValue }

    /// The format of `bytes` (the start of a file) among the standard decoders, or nil.
    package static func detect(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        ImageDecoders.standard.format(of: bytes)
    }

    /// The format of the file at `path` among the standard decoders.
    /// - Throws: ``ImagingError`` if it cannot be read, is empty, or no decoder takes it.
    package static func detect(fileAt path: some FileLocation) throws(ImagingError) -> ImageFormat {
        let path = path.fileSystemPath
        let file = try ImageFile(path: path)
        return try ImageDecoders.standard.registration(for: file.descriptor, name: path).format
    }
}

/// How many pixels a decoder may take on, checked from the header before any pixel memory exists.
package struct DecodeLimits: Sendable, Hashable, Codable {
    /// Most pixels (width × height) of an image decoded row by row. Memory for those grows with
    /// the width, not the height, so the default is generous: 512 MP (a 20000×20000 PNG streams;
    /// 65000×65000 is refused).
    package var maxPixels: Int
    /// Most pixels of an image that must be held whole while decoding: interlaced PNG (every
    /// pass refines the whole image) and progressive JPEG (libjpeg keeps every coefficient; at
    /// 1/8 the shim's own decode, 3 bytes a block, is bound by `maxPixels` instead).
    /// Default 64 MP: at most 256 MB of RGBA, or about 200 MB of coefficients.
    package var maxBufferedPixels: Int

    package init(maxPixels: Int = 512 << 20, maxBufferedPixels: Int = 64 << 20) {
        self.maxPixels = maxPixels
        self.maxBufferedPixels = maxBufferedPixels
    }
}

/// A file opened read-only for decoding; closed when released.
package final class ImageFile {
    package let descriptor: Int32

    package init(path: String) throws(ImagingError) {
        switch retryingInterrupts({ open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): throw ImagingError(path: path, reason: .unreadable(errno.description))
        }
    }

    deinit { close(descriptor) }
}
