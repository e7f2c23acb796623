import Foundation
import ThumbcacheImaging

/// Writes PNG files of any colour type, bit depth and interlacing, independently of libpng:
/// stored (uncompressed) deflate blocks, CRC-32 and Adler-32 computed here.
enum PNGWriter {
    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let t = Array(type.utf8)
        return be32(UInt32(data.count)) + t + data + be32(crc(t + data))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var i = 0
        repeat {
            let n = min(65535, data.count - i)
            let final: UInt8 = i + n == data.count ? 1 : 0
            out += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[i..<i + n]
            i += n
        } while i < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for x in data {
            a = (a + UInt32(x)) % 65521
            b = (b + a) % 65521
        }
        return out + be32(b << 16 | a)
    }

    /// Packs one row of samples (each < 2^depth) at `depth` bits per sample.
    static func pack(_ samples: [Int], depth: Int) -> [UInt8] {
        if depth == 8 { return samples.map { UInt8($0) } }
        if depth == 16 { return samples.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }
        var out: [UInt8] = []
        var acc = 0, bits = 0
        for s in samples {
            acc = acc << depth | s
            bits += depth
            if bits == 8 {
                out.append(UInt8(acc))
                acc = 0
                bits = 0
            }
        }
        if bits > 0 { out.append(UInt8(acc << (8 - bits))) }
        return out
    }

    /// A PNG with `samples(x, y)` giving the channel values of each pixel (as stored).
    static func make(
        width: Int, height: Int, colorType: UInt8, depth: Int, interlaced: Bool = false, palette: [(UInt8, UInt8, UInt8)] = [],
        transparency: [UInt8]? = nil, exif: [UInt8]? = nil, samples: (Int, Int) -> [Int]
    ) -> [UInt8] {
        var ihdr = be32(UInt32(width)) + be32(UInt32(height))
        ihdr += [UInt8(depth), colorType, 0, 0, interlaced ? 1 : 0]
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", ihdr)
        if !palette.isEmpty { file += chunk("PLTE", palette.flatMap { [$0.0, $0.1, $0.2] }) }
        if let transparency { file += chunk("tRNS", transparency) }
        if let exif { file += chunk("eXIf", exif) }
        var raw: [UInt8] = []
        let passes: [(Int, Int, Int, Int)] =
            interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        for (x0, y0, dx, dy) in passes {
            guard x0 < width, y0 < height else { continue }
            for y in stride(from: y0, to: height, by: dy) {
                let row = stride(from: x0, to: width, by: dx).flatMap { samples($0, y) }
                raw.append(0)  // filter: none
                raw += pack(row, depth: depth)
            }
        }
        file += chunk("IDAT", zlibStored(raw))
        file += chunk("IEND", [])
        return file
    }
}

/// Builds little-endian TIFF/EXIF blocks.
struct EXIFBuilder {
    enum Value {
        case short(UInt16)
        case long(UInt32)
        case ascii(String)
        case rationals([(UInt32, UInt32)])
        /// A pointer to a sub-IFD built from these entries.
        case subIFD(SubIFD)

        static func ifd(_ entries: [(UInt16, Value)]) -> Value { .subIFD(SubIFD(entries)) }
    }

    final class SubIFD {
        let entries: [(UInt16, Value)]
        init(_ entries: [(UInt16, Value)]) { self.entries = entries }
    }

    var ifd0: [(UInt16, Value)] = []
    var thumbnail: [UInt8]?

    func build() -> [UInt8] {
        var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        // Writes an IFD at the end of `out`; returns the offset of its "next IFD" field.
        func writeIFD(_ entries: [(UInt16, Value)]) -> Int {
            let start = out.count
            let sorted = entries.sorted { $0.0 < $1.0 }
            var dataOffset = start + 2 + sorted.count * 12 + 4
            var body: [UInt8] = le16(UInt16(sorted.count))
            var data: [UInt8] = []
            var subIFDs: [(entryIndex: Int, entries: [(UInt16, Value)])] = []
            for (i, (tag, value)) in sorted.enumerated() {
                body += le16(tag)
                switch value {
                case .short(let v): body += le16(3) + le32(1) + le16(v) + [0, 0]
                case .long(let v): body += le16(4) + le32(1) + le32(v)
                case .ascii(let s):
                    let bytes = Array(s.utf8) + [0]
                    body += le16(2) + le32(UInt32(bytes.count))
                    if bytes.count <= 4 {
                        body += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
                    } else {
                        body += le32(UInt32(dataOffset))
                        data += bytes
                        dataOffset += bytes.count
                    }
                case .rationals(let rs):
                    body += le16(5) + le32(UInt32(rs.count)) + le32(UInt32(dataOffset))
                    for (n, d) in rs { data += le32(n) + le32(d) }
                    dataOffset += rs.count * 8
                case .subIFD(let sub):
                    body += le16(4) + le32(1) + le32(0)  // patched below
                    subIFDs.append((i, sub.entries))
                }
            }
            out += body
            let next = out.count
            out += le32(0)
            out += data
            for (index, sub) in subIFDs {
                let at = out.count
                _ = writeIFD(sub)
                let field = start + 2 + index * 12 + 8
                out.replaceSubrange(field..<field + 4, with: le32(UInt32(at)))
            }
            return next
        }
        let next0 = writeIFD(ifd0)
        if let thumbnail {
            let ifd1 = out.count
            out.replaceSubrange(next0..<next0 + 4, with: le32(UInt32(ifd1)))
            let thumbOffset = ifd1 + 2 + 2 * 12 + 4
            _ = writeIFD([(0x0201, .long(UInt32(thumbOffset))), (0x0202, .long(UInt32(thumbnail.count)))])
            out += thumbnail
        }
        return out
    }
}

/// A smooth, photograph-like test image with an asymmetric layout (so orientation errors show).
func photoLikeImage(width: Int, height: Int, alpha: Bool = false) -> RGBAImage {
    var pixels = [UInt8](repeating: 0, count: width * height * 4)
    for y in 0..<height {
        for x in 0..<width {
            let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
            let i = (y * width + x) * 4
            pixels[i] = UInt8(clamping: Int(255 * fx))
            pixels[i + 1] = UInt8(clamping: Int(255 * fy))
            pixels[i + 2] = UInt8(clamping: Int(128 + 100 * sin(6 * fx + 3 * fy)))
            pixels[i + 3] = alpha ? UInt8(clamping: Int(255 * (1 - fx * fy))) : 255
        }
    }
    return RGBAImage(width: width, height: height, pixels: pixels, hasAlpha: alpha)
}

func psnr(_ a: RGBAImage, _ b: RGBAImage) -> Double {
    precondition(a.width == b.width && a.height == b.height)
    var sum = 0.0
    for i in 0..<a.pixels.count {
        let d = Double(a.pixels[i]) - Double(b.pixels[i])
        sum += d * d
    }
    let mse = sum / Double(a.pixels.count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}
