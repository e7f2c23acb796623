/// Truevision TGA: colour-mapped, true-colour and gray images, raw or RLE, 8/15/16/24/32 bits,
/// either origin. A parser of our own (Docs/IMAGING.md); raw rows are read one at a time, RLE
/// images are expanded whole first (a run may cross rows).
final class TGASource: RowSource {
    private let reader: ByteReader
    private let type: Int
    private let depth: Int
    private let alphaBits: Int
    private let topOrigin: Bool
    private let rightOrigin: Bool
    private let palette: [(UInt8, UInt8, UInt8, UInt8)]
    private let dataOffset: Int
    let header: RowSourceHeader

    /// The 18-byte header is plausible: a known image type, depth and colour map. TGA has no
    /// signature, so this (and the file's name) is all detection has.
    static func plausible(_ h: UnsafeRawBufferPointer) -> Bool {
        guard h.count >= 18 else { return false }
        let colorMap = h[1], type = h[2], depth = h[16]
        let width = Int(h[12]) | Int(h[13]) << 8, height = Int(h[14]) | Int(h[15]) << 8
        guard colorMap <= 1, [1, 2, 3, 9, 10, 11].contains(type), width > 0, height > 0, h[17] & 0xC0 == 0 else { return false }
        // A colour map, even one a true-colour image carries unused, has entries of a known size.
        guard colorMap == 0 || [15, 16, 24, 32].contains(h[7]) else { return false }
        switch type {
        case 1, 9: return colorMap == 1 && depth == 8 && [15, 16, 24, 32].contains(h[7])
        case 3, 11: return depth == 8 || depth == 16
        default: return [15, 16, 24, 32].contains(depth)
        }
    }

    init(descriptor: Int32, name: String) throws(ImagingError) {
        reader = try ByteReader(descriptor: descriptor, name: name)
        let h = try reader.bytes(at: 0, count: 18, what: "TGA header")
        guard h.withUnsafeBytes({ Self.plausible($0) }) else { throw reader.corrupt("not a TGA image this decoder reads") }
        type = Int(h[2])
        depth = Int(h[16])
        alphaBits = Int(h[17] & 0x0F)
        rightOrigin = h[17] & 0x10 != 0
        topOrigin = h[17] & 0x20 != 0
        let width = h.le16(12), height = h.le16(14)
        var offset = 18 + Int(h[0])
        var palette: [(UInt8, UInt8, UInt8, UInt8)] = []
        if h[1] == 1 {
            let first = h.le16(3), count = h.le16(5), entry = (Int(h[7]) + 7) / 8
            let bytes = try reader.bytes(at: offset, count: count * entry, what: "TGA colour map")
            palette = [(UInt8, UInt8, UInt8, UInt8)](repeating: (0, 0, 0, 255), count: first)
                + (0..<count).map { Self.pixel(bytes, at: $0 * entry, depth: Int(h[7]), alpha: Int(h[7]) == 32) }
            offset += count * entry
        }
        self.palette = palette
        dataOffset = offset
        let rle = type >= 9
        let alpha = (depth == 32 || (depth == 16 && type != 3 && type != 11)) && alphaBits > 0
            || (type == 1 || type == 9) && Int(h[7]) == 32
        header = RowSourceHeader(width: width, height: height, hasAlpha: alpha, buffered: rle,
                                 bufferedBytes: rle ? width * height * 4 : 0, bitsPerSample: depth >= 24 ? 8 : depth == 16 ? 5 : 8,
                                 colorSpace: type == 3 || type == 11 ? "Gray" : type == 1 || type == 9 ? "Palette" : "RGB")
    }

    /// One stored pixel (BGR order; 15/16 bits are 5-5-5 with an attribute bit) as RGBA.
    private static func pixel(_ b: [UInt8], at i: Int, depth: Int, alpha: Bool) -> (UInt8, UInt8, UInt8, UInt8) {
        switch depth {
        case 15, 16:
            let v = Int(b[i]) | Int(b[i + 1]) << 8
            func five(_ x: Int) -> UInt8 { UInt8((x & 31) * 255 / 31) }
            return (five(v >> 10), five(v >> 5), five(v), alpha && depth == 16 ? (v & 0x8000 != 0 ? 255 : 0) : 255)
        case 24: return (b[i + 2], b[i + 1], b[i], 255)
        case 32: return (b[i + 2], b[i + 1], b[i], alpha ? b[i + 3] : 255)
        default: return (b[i], b[i], b[i], 255)
        }
    }

    private func rgba(_ b: [UInt8], at i: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        switch type {
        case 1, 9:
            let index = depth == 16 ? Int(b[i]) | Int(b[i + 1]) << 8 : Int(b[i])
            return index < palette.count ? palette[index] : (0, 0, 0, 255)
        case 3, 11:
            return depth == 16 ? (b[i], b[i], b[i], alphaBits > 0 ? b[i + 1] : 255) : (b[i], b[i], b[i], 255)
        default:
            return Self.pixel(b, at: i, depth: depth, alpha: header.hasAlpha)
        }
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) { (header.width, header.height) }

    /// One row as stored (`raw`) into RGBA at `base` of `out`, mirrored if the origin is right.
    private func expand(_ raw: [UInt8], into out: inout [UInt8], at base: Int) {
        let width = header.width, bytesPerPixel = (depth + 7) / 8
        if type & 7 == 2 && (depth == 24 || depth == 32) && !rightOrigin {
            // 24-bit BGR and 32-bit BGRA, the common case, without the per-pixel dispatch.
            copyBGR(raw, into: &out, at: base, width: width, bytesPerPixel: bytesPerPixel, alpha: header.hasAlpha)
            return
        }
        for x in 0..<width {
            let o = base + (rightOrigin ? width - 1 - x : x) * 4
            (out[o], out[o + 1], out[o + 2], out[o + 3]) = rgba(raw, at: x * bytesPerPixel)
        }
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let (width, height) = (header.width, header.height)
        let bytesPerPixel = (depth + 7) / 8
        if type < 9 {
            var row = [UInt8](repeating: 0, count: width * 4)
            let stride = width * bytesPerPixel
            for y in 0..<height {
                let stored = topOrigin ? y : height - 1 - y
                let raw = try reader.bytes(at: dataOffset + stored * stride, count: stride, what: "TGA row \(stored)")
                expand(raw, into: &row, at: 0)
                row.withUnsafeBufferPointer { sink($0.baseAddress!) }
            }
            return
        }
        // RLE: packets of a repeated pixel or of literal pixels, in stored order, expanded a row at
        // a time into the stored layout (a packet may cross rows), then each row as the raw ones.
        var image = [UInt8](repeating: 0, count: width * height * 4)
        var stream = ByteStream(reader, at: dataOffset)
        var raw = [UInt8](repeating: 0, count: width * bytesPerPixel)
        var pixel = [UInt8](repeating: 0, count: bytesPerPixel)
        var left = 0, repeated = false
        for storedRow in 0..<height {
            var x = 0
            while x < width {
                if left == 0 {
                    let packet = Int(try stream.byte("TGA RLE data"))
                    left = (packet & 0x7F) + 1
                    repeated = packet & 0x80 != 0
                    if repeated { try pixel.withUnsafeMutableBufferPointer { p throws(ImagingError) in try stream.take(bytesPerPixel, into: p.baseAddress!, "TGA RLE data") } }
                }
                let n = min(left, width - x)
                try raw.withUnsafeMutableBufferPointer { r throws(ImagingError) in
                    let at = r.baseAddress! + x * bytesPerPixel
                    if !repeated { return try stream.take(n * bytesPerPixel, into: at, "TGA RLE data") }
                    pixel.withUnsafeBufferPointer { p in
                        for i in 0..<n { (at + i * bytesPerPixel).update(from: p.baseAddress!, count: bytesPerPixel) }
                    }
                }
                x += n
                left -= n
            }
            expand(raw, into: &image, at: (topOrigin ? storedRow : height - 1 - storedRow) * width * 4)
        }
        image.withUnsafeBufferPointer { p in
            for y in 0..<height { sink(p.baseAddress! + y * width * 4) }
        }
    }
}
