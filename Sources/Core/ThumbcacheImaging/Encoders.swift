#if canImport(Glibc)
import Glibc
#endif
import CThumbcacheJPEG
import CThumbcachePNG

/// Encodes thumbnails.
package enum ImageEncoder {
    /// PNG, 8-bit RGBA (or RGB when the image is opaque, unless `alwaysRGBA`), with `text` as
    /// uncompressed tEXt chunks before the image data (keys and values Latin-1, as PNG requires).
    /// Deflated by ISA-L at level 1 with the Up filter (IMAGING.md, "PNG output").
    package static func png(
        _ image: RGBAImage, exif: [UInt8]? = nil, text: [(key: String, value: String)] = [], alwaysRGBA: Bool = false
    ) throws(ImagingError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        // Owned C strings for the C writer, freed after the call.
        let strings = text.flatMap { [strdup($0.key), strdup($0.value)] }
        defer { strings.forEach { free($0) } }
        let pointers = strings.map { UnsafePointer($0) }
        let status = image.pixels.withUnsafeBufferPointer { p in
            (exif ?? []).withUnsafeBufferPointer { e in
                pointers.withUnsafeBufferPointer { t in
                    cpng_encode_rgba(
                        p.baseAddress, UInt32(image.width), UInt32(image.height), image.width * 4, image.hasAlpha || alwaysRGBA ? 1 : 0,
                        exif == nil ? nil : e.baseAddress, e.count, t.baseAddress, text.count,
                        &out, &length, &message, message.count)
                }
            }
        }
        guard status == CPNG_OK, let out else {
            throw ImagingError(path: "(thumbnail)", reason: .encodingFailed(cText(message)))
        }
        defer { cpng_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }

    /// How a JPEG is written.
    package struct JPEGOptions: Sendable, Hashable {
        package enum Color: Int32, Sendable {
            case rgb = 0
            /// One gray component, taken from the red channel.
            case gray = 1
            /// The four channels as CMYK (Adobe-inverted convention: 255 = no ink).
            case cmyk = 2
            /// As `cmyk`, stored as YCCK.
            case ycck = 3
        }
        package var quality = 85
        package var progressive = false
        package var color = Color.rgb
        /// Luma sampling factors: (2, 2) is 4:2:0, (2, 1) 4:2:2, (1, 1) 4:4:4.
        package var lumaSampling = (horizontal: 2, vertical: 2)
        /// A restart marker every this many MCU rows; 0 for none.
        package var restartRows = 0

        package init(quality: Int = 85, progressive: Bool = false) {
            self.quality = quality
            self.progressive = progressive
        }

        package static func == (a: JPEGOptions, b: JPEGOptions) -> Bool {
            a.quality == b.quality && a.progressive == b.progressive && a.color == b.color
                && a.lumaSampling == b.lumaSampling && a.restartRows == b.restartRows
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(quality)
            hasher.combine(progressive)
            hasher.combine(color)
            hasher.combine(lumaSampling.horizontal)
            hasher.combine(lumaSampling.vertical)
            hasher.combine(restartRows)
        }
    }

    /// JPEG (alpha dropped), for opaque thumbnails; optionally progressive, optionally with EXIF.
    package static func jpeg(
        _ image: RGBAImage, quality: Int = 85, progressive: Bool = false, exif: [UInt8]? = nil
    ) throws(ImagingError) -> [UInt8] {
        try jpeg(image, options: JPEGOptions(quality: quality, progressive: progressive), exif: exif)
    }

    /// JPEG with every option: colour model, chroma subsampling, restart markers.
    package static func jpeg(_ image: RGBAImage, options: JPEGOptions, exif: [UInt8]? = nil) throws(ImagingError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        var o = cjpeg_options(
            quality: Int32(options.quality), progressive: options.progressive ? 1 : 0,
            color: cjpeg_color(rawValue: UInt32(options.color.rawValue)), luma_h: Int32(options.lumaSampling.horizontal),
            luma_v: Int32(options.lumaSampling.vertical), restart_rows: Int32(options.restartRows))
        let status = image.pixels.withUnsafeBufferPointer { p in
            (exif ?? []).withUnsafeBufferPointer { e in
                cjpeg_encode_rgba(
                    p.baseAddress, UInt32(image.width), UInt32(image.height), image.width * 4, &o,
                    exif == nil ? nil : e.baseAddress, e.count, &out, &length, &message, message.count)
            }
        }
        guard status == CJPEG_OK, let out else {
            throw ImagingError(path: "(thumbnail)", reason: .encodingFailed(cText(message)))
        }
        defer { cjpeg_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }
}
