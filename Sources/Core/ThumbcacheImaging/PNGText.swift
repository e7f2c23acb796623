#if canImport(Glibc)
import Glibc
#endif

/// The tEXt chunks at the head of a PNG: where the freedesktop thumbnail standard keeps its
/// `Thumb::` keys. Read by our own bounded chunk walk, not libpng: checking a thumbnail's keys
/// must not decode it, and the file may come from any program.
package enum PNGText {
    /// How much of the file is read at most: keys sit before the image data.
    package static let headLimit = 64 * 1024

    /// The keys and values (Latin-1) of `path`'s tEXt chunks before its first IDAT, or nil if it
    /// cannot be read or is not a PNG. Reads 4 KiB, where the keys of a thumbnail are, and more
    /// only if they go on past it.
    package static func read(path: String) -> [String: String]? {
        guard let file = try? ImageFile(path: path), let reader = try? ByteReader(descriptor: file.descriptor, name: path) else { return nil }
        var length = min(reader.size, 4096)
        while true {
            guard let head = try? reader.bytes(at: 0, count: length, what: "PNG head") else { return nil }
            let (keys, complete) = walk(head)
            if complete || length == min(reader.size, headLimit) { return keys }
            length = min(reader.size, headLimit)
        }
    }

    /// The tEXt keys of a PNG held in memory (its head is enough).
    package static func parse(_ bytes: [UInt8]) -> [String: String]? { walk(bytes).keys }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The keys, and whether the walk reached the image data (else `bytes` ended first).
    static func walk(_ bytes: [UInt8]) -> (keys: [String: String]?, complete: Bool) {
        guard bytes.count >= 8, Array(bytes[0..<8]) == signature else { return (nil, true) }
        var keys: [String: String] = [:]
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let start = offset + 8
            if type == "IDAT" || type == "IEND" { return (keys, true) }
            guard length <= bytes.count - start else { break }  // runs past what was read
            if type == "tEXt", let zero = bytes[start..<start + length].firstIndex(of: 0) {
                keys[latin1(bytes[start..<zero])] = latin1(bytes[zero + 1..<start + length])
            }
            offset = start + length + 4  // data, then the CRC
        }
        return (keys, false)
    }

    private static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

extension PNGText {
    /// `png` with its tEXt chunks for `keys` replaced by (or, for a new key, joined by) the given
    /// values, every other chunk kept as it is: a thumbnail's `Thumb::URI` changed without
    /// decoding it. Nil if `png` is not a well-formed chunk sequence.
    package static func replacing(_ keys: [(key: String, value: String)], in png: [UInt8]) -> [UInt8]? {
        guard png.count >= 8, Array(png[0..<8]) == signature else { return nil }
        let names = Set(keys.map(\.key))
        var out = Array(png[0..<8])
        var offset = 8
        var wroteKeys = false
        while offset + 12 <= png.count {
            let length = Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
            guard length <= png.count - offset - 12 else { return nil }
            let end = offset + 12 + length
            let type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
            var keep = true
            if type == "tEXt", let zero = png[offset + 8..<end - 4].firstIndex(of: 0), names.contains(latin1(png[offset + 8..<zero])) {
                keep = false
            }
            if keep { out += png[offset..<end] }
            if type == "IHDR" && !wroteKeys {
                for (key, value) in keys { out += chunk("tEXt", Array(key.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }) + [0] + Array(value.utf8)) }
                wroteKeys = true
            }
            offset = end
            if type == "IEND" { return wroteKeys ? out : nil }
        }
        return nil
    }

    /// One chunk: length, type, data, CRC-32 of type and data.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = CRC32.of(body)
        return [UInt8(data.count >> 24 & 255), UInt8(data.count >> 16 & 255), UInt8(data.count >> 8 & 255), UInt8(data.count & 255)] + body
            + [UInt8(crc >> 24), UInt8(crc >> 16 & 255), UInt8(crc >> 8 & 255), UInt8(crc & 255)]
    }
}

/// CRC-32 (ISO 3309, as PNG and zlib use it).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    static func of(_ bytes: some Sequence<UInt8>) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { c, b in table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
    }
}
