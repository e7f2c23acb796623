import CJPEG
import CPNG

/// Encodes thumbnails.
public enum ImageEncoder {
    /// zlib level 6 with adaptive filtering: see Docs/IMAGING.md for the size/time measurements.
    public static let defaultPNGCompression = 6

    /// PNG, 8-bit RGBA (or RGB when the image is opaque).
    public static func png(
        _ image: RGBAImage, compressionLevel: Int = defaultPNGCompression, exif: [UInt8]? = nil
    ) throws(ImagingError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let allFilters: Int32 = 0x08 | 0x10 | 0x20 | 0x40 | 0x80  // PNG_ALL_FILTERS
        let status = image.pixels.withUnsafeBufferPointer { p in
            (exif ?? []).withUnsafeBufferPointer { e in
                cpng_encode_rgba(
                    p.baseAddress, UInt32(image.width), UInt32(image.height), image.width * 4, image.hasAlpha ? 1 : 0,
                    Int32(compressionLevel), allFilters, exif == nil ? nil : e.baseAddress, e.count, &out, &length,
                    &message, message.count)
            }
        }
        guard status == CPNG_OK, let out else {
            throw ImagingError(path: "(thumbnail)", reason: .encodingFailed(cText(message)))
        }
        defer { cpng_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }

    /// JPEG (alpha dropped), for opaque thumbnails; optionally progressive, optionally with EXIF.
    public static func jpeg(
        _ image: RGBAImage, quality: Int = 85, progressive: Bool = false, exif: [UInt8]? = nil
    ) throws(ImagingError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = image.pixels.withUnsafeBufferPointer { p in
            (exif ?? []).withUnsafeBufferPointer { e in
                cjpeg_encode_rgba(
                    p.baseAddress, UInt32(image.width), UInt32(image.height), image.width * 4, Int32(quality),
                    progressive ? 1 : 0, exif == nil ? nil : e.baseAddress, e.count, &out, &length, &message, message.count)
            }
        }
        guard status == CJPEG_OK, let out else {
            throw ImagingError(path: "(thumbnail)", reason: .encodingFailed(cText(message)))
        }
        defer { cjpeg_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }
}
