import CThumbcachePNG

/// Whole-image decoding of small images held in memory (cached thumbnails).
package enum ImageDecoder {
    /// Decodes PNG bytes to RGBA8; refuses images over `maxPixels`.
    package static func png(_ bytes: [UInt8], name: String = "(PNG data)", maxPixels: Int = 16 << 20) throws(ImagingError) -> RGBAImage {
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

    /// Decodes JPEG bytes to RGBA8 at full size; refuses images over `maxPixels` before decoding.
    package static func jpeg(_ bytes: [UInt8], name: String = "(JPEG data)", maxPixels: Int = 16 << 20) throws(ImagingError) -> RGBAImage {
        let source = try JPEGSource(bytes: bytes, path: name)
        guard source.width > 0, source.height > 0, source.width * source.height <= maxPixels else {
            throw ImagingError(path: name, reason: .tooLarge(width: UInt32(source.width), height: UInt32(source.height), limit: maxPixels))
        }
        return try whole(source)
    }

    /// All of `source`'s pixels at full size.
    static func whole(_ source: JPEGSource) throws(ImagingError) -> RGBAImage {
        try source.start(shrink: 1)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(source.outputWidth * source.outputHeight * 4)
        try source.readRows { row in pixels.append(contentsOf: UnsafeBufferPointer(start: row, count: source.outputWidth * 4)) }
        return RGBAImage(width: source.outputWidth, height: source.outputHeight, pixels: pixels, hasAlpha: false)
    }
}
