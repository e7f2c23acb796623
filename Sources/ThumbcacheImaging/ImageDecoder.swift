import CPNG

/// Whole-image decoding of small images held in memory (cached thumbnails).
public enum ImageDecoder {
    /// Decodes PNG bytes to RGBA8; refuses images over `maxPixels`.
    public static func png(_ bytes: [UInt8], name: String = "(PNG data)", maxPixels: Int = 16 << 20) throws(ImagingError) -> RGBAImage {
        var info = cpng_info()
        var status = CPNG_OK
        var message = [CChar](repeating: 0, count: 256)
        let opened = bytes.withUnsafeBufferPointer { b in cpng_open_memory(b.baseAddress, b.count, &info, &status, &message, message.count) }
        guard let decoder = opened else { throw ImagingError(path: name, reason: .corrupt(cText(message))) }
        defer { cpng_close(decoder) }
        let w = Int(info.width), h = Int(info.height)
        guard w > 0, h > 0, w * h <= maxPixels else {
            throw ImagingError(path: name, reason: .tooLarge(width: info.width, height: info.height, limit: maxPixels))
        }
        guard cpng_start(decoder) == CPNG_OK else { throw ImagingError(path: name, reason: .corrupt(String(cString: cpng_message(decoder)))) }
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let ok = pixels.withUnsafeMutableBufferPointer { buffer in
            var rows = (0..<h).map { Optional(buffer.baseAddress! + $0 * w * 4) }
            return cpng_read_image(decoder, &rows) == CPNG_OK
        }
        guard ok else { throw ImagingError(path: name, reason: .corrupt(String(cString: cpng_message(decoder)))) }
        return RGBAImage(width: w, height: h, pixels: pixels, hasAlpha: info.has_alpha != 0)
    }
}
