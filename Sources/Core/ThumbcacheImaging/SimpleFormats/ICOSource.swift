/// Windows icons and cursors: the largest image of the directory (by area, then depth), which
/// is a PNG (decoded by libpng) or a DIB with its AND mask for transparency. A parser of our own
/// (Docs/IMAGING.md); icon images are at most 256 × 256 as DIBs, so they are decoded whole.
final class ICOSource: RowSource {
    private let reader: ByteReader
    private let entry: (offset: Int, size: Int)
    /// A PNG entry's size, read from its header; a DIB's from its bitmap header.
    let header: RowSourceHeader
    /// The chosen entry's bitmap header, read once at open; nil for a PNG entry.
    private let dib: DIBHeader?
    private var output: RGBAImage?

    /// PNG entries larger than this (the format allows any size) are refused.
    static let maxPNGPixels = 4096 * 4096

    init(descriptor: Int32, name: String) throws(ImagingError) {
        reader = try ByteReader(descriptor: descriptor, name: name)
        let directory = try reader.bytes(at: 0, count: 6, what: "icon directory")
        guard directory.le16(0) == 0, [1, 2].contains(directory.le16(2)) else { throw reader.corrupt("not an ICO or CUR file") }
        let count = directory.le16(4)
        guard count > 0 else { throw reader.corrupt("icon directory without images") }
        let entries = try reader.bytes(at: 6, count: count * 16, what: "icon directory")
        var best: (offset: Int, size: Int, area: Int, depth: Int)?
        for i in 0..<count {
            let e = i * 16
            let w = entries[e] == 0 ? 256 : Int(entries[e]), h = entries[e + 1] == 0 ? 256 : Int(entries[e + 1])
            let depth = entries.le16(e + 6), size = entries.le32(e + 8), offset = entries.le32(e + 12)
            guard size > 0, offset >= 6 + count * 16, offset < reader.size else { continue }
            if best == nil || w * h > best!.area || (w * h == best!.area && depth > best!.depth) { best = (offset, size, w * h, depth) }
        }
        guard let best else { throw reader.corrupt("no usable image in the icon directory") }
        entry = (best.offset, min(best.size, reader.size - best.offset))
        let signature = try reader.bytes(at: entry.offset, count: min(8, entry.size), what: "icon image")
        if signature == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            dib = nil
            let ihdr = try reader.bytes(at: entry.offset + 16, count: 8, what: "icon PNG header")
            let w = Int(ihdr[0]) << 24 | Int(ihdr[1]) << 16 | Int(ihdr[2]) << 8 | Int(ihdr[3])
            let h = Int(ihdr[4]) << 24 | Int(ihdr[5]) << 16 | Int(ihdr[6]) << 8 | Int(ihdr[7])
            guard w > 0, h > 0, w <= 1 << 16, h <= 1 << 16 else { throw reader.corrupt("icon PNG size \(w)×\(h) out of range") }
            header = RowSourceHeader(width: w, height: h, hasAlpha: true, buffered: true, bufferedBytes: w * h * 4, bitsPerSample: 8,
                                     colorSpace: "RGB")
        } else {
            let dib = try DIBHeader.read(reader, at: entry.offset, heightIsDoubled: true)
            self.dib = dib
            header = RowSourceHeader(width: dib.width, height: dib.height, hasAlpha: true, buffered: true,
                                     bufferedBytes: dib.width * dib.height * 4, bitsPerSample: 8,
                                     colorSpace: dib.bitsPerPixel <= 8 ? "Palette" : "RGB")
        }
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        if let dib {
            output = try decode(dib)
        } else {
            let bytes = try reader.bytes(at: entry.offset, count: entry.size, what: "icon PNG")
            let image = try ImageDecoder.png(bytes, name: reader.name + " (icon image)", maxPixels: Self.maxPNGPixels)
            guard image.width == header.width, image.height == header.height else { throw reader.corrupt("icon PNG size differs from its header") }
            output = image
        }
        return (header.width, header.height)
    }

    /// The XOR bitmap, bottom-up, then the 1-bit AND mask (1: transparent) unless the bitmap
    /// has 32 bits, whose alpha byte rules (all zero alpha means the mask rules after all).
    private func decode(_ header: DIBHeader) throws(ImagingError) -> RGBAImage {
        var dib = header
        guard dib.compression == 0 else { throw reader.corrupt("compressed icon bitmap") }
        if dib.bitsPerPixel == 32 { dib.masks.3 = 0xFF00_0000 }
        let (w, h) = (dib.width, dib.height)
        let paletteBytes = dib.palette.count * (dib.headerSize == 12 ? 3 : 4)
        let pixels = entry.offset + dib.headerSize + paletteBytes
        let maskStride = ((w + 31) / 32) * 4
        var image = RGBAImage(width: w, height: h, pixels: [UInt8](repeating: 0, count: w * h * 4), hasAlpha: true)
        var row = [UInt8](repeating: 0, count: w * 4)
        var anyAlpha = false
        for y in 0..<h {
            let raw = try reader.bytes(at: pixels + y * dib.stride, count: dib.stride, what: "icon row")
            dib.convert(row: raw, into: &row)
            if dib.bitsPerPixel == 32 { anyAlpha = anyAlpha || stride(from: 3, to: row.count, by: 4).contains { row[$0] != 0 } }
            let to = (h - 1 - y) * w * 4
            image.pixels.replaceSubrange(to..<(to + w * 4), with: row)
        }
        guard dib.bitsPerPixel != 32 || !anyAlpha else { return image }
        let maskStart = pixels + h * dib.stride
        // Some writers leave the mask out of 32-bit images; a missing mask means opaque.
        guard maskStart + h * maskStride <= reader.size else {
            for i in stride(from: 3, to: image.pixels.count, by: 4) { image.pixels[i] = 255 }
            return image
        }
        for y in 0..<h {
            let mask = try reader.bytes(at: maskStart + y * maskStride, count: maskStride, what: "icon mask")
            let to = (h - 1 - y) * w * 4
            for x in 0..<w { image.pixels[to + x * 4 + 3] = mask[x / 8] >> (7 - UInt8(x % 8)) & 1 == 1 ? 0 : 255 }
        }
        return image
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        guard let image = output else { return }
        image.pixels.withUnsafeBufferPointer { p in
            for y in 0..<image.height { sink(p.baseAddress! + y * image.width * 4) }
        }
        output = nil
    }
}
