/// A device-independent bitmap's header (BMP's, and each DIB image inside an ICO or CUR).
struct DIBHeader {
    var width: Int
    var height: Int
    /// Rows are stored top row first (a negative height in the file).
    var topDown: Bool
    var bitsPerPixel: Int
    /// 0 RGB, 1 RLE8, 2 RLE4, 3 bit fields, 6 bit fields with alpha.
    var compression: Int
    var headerSize: Int
    /// Channel masks for 16- and 32-bit pixels (red, green, blue, alpha).
    var masks: (UInt32, UInt32, UInt32, UInt32)
    var palette: [(UInt8, UInt8, UInt8)]

    var stride: Int { ((bitsPerPixel * width + 31) / 32) * 4 }
    var hasAlpha: Bool { bitsPerPixel == 32 && masks.3 != 0 }

    /// Parses the header at `offset`, its masks and its palette. `paletteLimit` bounds colours.
    static func read(_ reader: ByteReader, at offset: Int, heightIsDoubled: Bool = false) throws(ImagingError) -> DIBHeader {
        let size = try reader.bytes(at: offset, count: 4, what: "bitmap header").le32(0)
        guard [12, 40, 52, 56, 64, 108, 124].contains(size) else { throw reader.corrupt("unknown bitmap header of \(size) bytes") }
        let h = try reader.bytes(at: offset, count: size, what: "bitmap header")
        var d: DIBHeader
        if size == 12 {
            d = DIBHeader(width: h.le16(4), height: h.le16(6), topDown: false, bitsPerPixel: h.le16(10), compression: 0, headerSize: 12,
                          masks: (0, 0, 0, 0), palette: [])
        } else {
            let height = h.le32s(8)
            d = DIBHeader(width: h.le32s(4), height: abs(height), topDown: height < 0, bitsPerPixel: h.le16(14), compression: h.le32(16),
                          headerSize: size, masks: (0, 0, 0, 0), palette: [])
        }
        if heightIsDoubled { d.height /= 2 }  // an icon's height counts its AND mask too
        guard d.width > 0, d.height > 0, d.width <= 1 << 16, d.height <= 1 << 16 else {
            throw reader.corrupt("bitmap size \(d.width)×\(d.height) out of range")
        }
        guard [1, 4, 8, 16, 24, 32].contains(d.bitsPerPixel) else { throw reader.corrupt("\(d.bitsPerPixel) bits per pixel") }
        switch (d.compression, d.bitsPerPixel) {
        case (0, _), (1, 8), (2, 4), (3, 16), (3, 32), (6, 16), (6, 32): break
        default: throw reader.corrupt("unsupported bitmap compression \(d.compression) at \(d.bitsPerPixel) bits")
        }
        var next = offset + size
        if d.compression == 3 || d.compression == 6 {
            // Masks follow a 40-byte header; later headers hold them at 40.
            let m = size >= 52 ? Array(h[40..<min(size, 56)]) : try reader.bytes(at: next, count: d.compression == 6 ? 16 : 12, what: "bit masks")
            if size < 52 { next += m.count }
            d.masks = (UInt32(m.le32(0)), UInt32(m.le32(4)), UInt32(m.le32(8)), m.count >= 16 ? UInt32(m.le32(12)) : 0)
        } else if d.bitsPerPixel == 16 {
            d.masks = (0x7C00, 0x03E0, 0x001F, 0)
        } else if d.bitsPerPixel == 32 {
            // BI_RGB's fourth byte is padding by the format; v4/v5 headers may still name an alpha mask.
            d.masks = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF, size >= 56 ? UInt32(h.le32(52)) : 0)
        }
        if d.bitsPerPixel <= 8 {
            let used = size >= 40 ? h.le32(32) : 0
            let count = used > 0 && used < 1 << d.bitsPerPixel ? used : 1 << d.bitsPerPixel
            let entry = size == 12 ? 3 : 4
            let bytes = try reader.bytes(at: next, count: count * entry, what: "palette")
            d.palette = (0..<count).map { (bytes[$0 * entry + 2], bytes[$0 * entry + 1], bytes[$0 * entry]) }
        }
        return d
    }

    /// The pixels of one stored row (RGB or bit fields), as RGBA into `out`.
    func convert(row raw: [UInt8], into out: inout [UInt8]) {
        // 24-bit BGR and 32-bit BGRA/BGRX rows, most bitmaps, without the per-pixel dispatch.
        let bgra = bitsPerPixel == 32 && masks.0 == 0x00FF_0000 && masks.1 == 0x0000_FF00 && masks.2 == 0x0000_00FF
            && (masks.3 == 0 || masks.3 == 0xFF00_0000)
        if bitsPerPixel == 24 || bgra {
            copyBGR(raw, into: &out, width: width, bytesPerPixel: bitsPerPixel / 8, alpha: masks.3 != 0)
            return
        }
        for x in 0..<width {
            let o = x * 4
            switch bitsPerPixel {
            case 1, 4, 8:
                let perByte = 8 / bitsPerPixel
                let shift = UInt8((perByte - 1 - x % perByte) * bitsPerPixel)
                let index = Int(raw[x / perByte] >> shift) & ((1 << bitsPerPixel) - 1)
                let c = index < palette.count ? palette[index] : (0, 0, 0)
                (out[o], out[o + 1], out[o + 2], out[o + 3]) = (c.0, c.1, c.2, 255)
            case 24:
                (out[o], out[o + 1], out[o + 2], out[o + 3]) = (raw[x * 3 + 2], raw[x * 3 + 1], raw[x * 3], 255)
            default:
                let v = bitsPerPixel == 16 ? UInt32(raw.le16(x * 2)) : UInt32(raw.le32(x * 4))
                out[o] = Self.channel(v, masks.0)
                out[o + 1] = Self.channel(v, masks.1)
                out[o + 2] = Self.channel(v, masks.2)
                out[o + 3] = masks.3 == 0 ? 255 : Self.channel(v, masks.3)
            }
        }
    }

    /// The masked bits of `v`, scaled to 8 bits.
    static func channel(_ v: UInt32, _ mask: UInt32) -> UInt8 {
        guard mask != 0 else { return 0 }
        let shift = mask.trailingZeroBitCount
        let bits = (mask >> shift).trailingZeroBitCount == 0 ? (mask >> shift).nonzeroBitCount : 0
        guard bits > 0 else { return 0 }
        let maximum = (UInt32(1) << min(bits, 31)) - 1
        let value = min((v & mask) >> shift, maximum)
        return UInt8((UInt64(value) * 255 + UInt64(maximum) / 2) / UInt64(maximum))
    }

    /// An RLE8 or RLE4 bitmap expanded to palette indices, bottom row first as stored.
    func expandRLE(_ reader: ByteReader, at offset: Int) throws(ImagingError) -> [UInt8] {
        var indices = [UInt8](repeating: 0, count: width * height)
        var stream = ByteStream(reader, at: offset)
        var x = 0, y = 0
        func put(_ v: UInt8) {
            if x < width && y < height { indices[y * width + x] = v }
            x += 1
        }
        while y < height {
            let count = Int(try stream.byte("RLE data")), value = try stream.byte("RLE data")
            if count > 0 {
                for i in 0..<count { put(compression == 1 ? value : (i % 2 == 0 ? value >> 4 : value & 0x0F)) }
                continue
            }
            switch value {
            case 0: x = 0; y += 1  // end of line
            case 1: return indices  // end of bitmap
            case 2:
                x += Int(try stream.byte("RLE delta"))
                y += Int(try stream.byte("RLE delta"))
            default:
                let n = Int(value)
                var pair: UInt8 = 0
                for i in 0..<n {
                    if compression == 1 {
                        put(try stream.byte("RLE data"))
                    } else {
                        if i % 2 == 0 { pair = try stream.byte("RLE data") }
                        put(i % 2 == 0 ? pair >> 4 : pair & 0x0F)
                    }
                }
                // Absolute runs are padded to 16 bits.
                let stored = compression == 1 ? n : (n + 1) / 2
                if stored % 2 == 1 { _ = try stream.byte("RLE padding") }
            }
        }
        return indices
    }
}

/// Windows and OS/2 bitmaps: 1 to 32 bits, palettes, bit fields, RLE4/RLE8, bottom-up or
/// top-down. A parser of our own (Docs/IMAGING.md); uncompressed rows are read one at a time
/// from wherever they lie, RLE bitmaps are expanded to one byte per pixel first.
final class BMPSource: RowSource {
    private let reader: ByteReader
    private let dib: DIBHeader
    private let dataOffset: Int
    let header: RowSourceHeader

    init(descriptor: Int32, name: String) throws(ImagingError) {
        reader = try ByteReader(descriptor: descriptor, name: name)
        let file = try reader.bytes(at: 0, count: 14, what: "file header")
        guard file[0] == UInt8(ascii: "B"), file[1] == UInt8(ascii: "M") else { throw reader.corrupt("not a BMP file") }
        dib = try DIBHeader.read(reader, at: 14)
        dataOffset = file.le32(10)
        guard dataOffset < reader.size else { throw reader.truncated("bitmap data") }
        let rle = dib.compression == 1 || dib.compression == 2
        header = RowSourceHeader(width: dib.width, height: dib.height, hasAlpha: dib.hasAlpha, buffered: rle,
                                 bufferedBytes: rle ? dib.width * dib.height : 0, bitsPerSample: dib.bitsPerPixel <= 8 ? 8 : min(dib.bitsPerPixel / 3, 8),
                                 colorSpace: dib.bitsPerPixel <= 8 ? "Palette" : "RGB")
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) { (dib.width, dib.height) }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        var row = [UInt8](repeating: 0, count: dib.width * 4)
        if dib.compression == 1 || dib.compression == 2 {
            let indices = try dib.expandRLE(reader, at: dataOffset)
            for y in 0..<dib.height {
                let stored = dib.topDown ? y : dib.height - 1 - y
                for x in 0..<dib.width {
                    let i = Int(indices[stored * dib.width + x])
                    let c = i < dib.palette.count ? dib.palette[i] : (0, 0, 0)
                    (row[x * 4], row[x * 4 + 1], row[x * 4 + 2], row[x * 4 + 3]) = (c.0, c.1, c.2, 255)
                }
                row.withUnsafeBufferPointer { sink($0.baseAddress!) }
            }
            return
        }
        var raw = [UInt8](repeating: 0, count: dib.stride)
        for y in 0..<dib.height {
            let stored = dib.topDown ? y : dib.height - 1 - y
            try reader.read(into: &raw, at: dataOffset + stored * dib.stride, what: "bitmap row \(stored)")
            dib.convert(row: raw, into: &row)
            row.withUnsafeBufferPointer { sink($0.baseAddress!) }
        }
    }
}
