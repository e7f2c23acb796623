#if canImport(Glibc)
import Glibc
#endif

/// The tEXt chunks at the head of a PNG: where the freedesktop thumbnail standard keeps its
/// `Thumb::` keys. Read by our own bounded chunk walk, not libpng: checking a thumbnail's keys
/// must not decode it, and the file may come from any program.
public enum PNGText {
    /// How much of the file is read at most: keys sit before the image data.
    public static let headLimit = 64 * 1024

    /// The keys and values (Latin-1) of `path`'s tEXt chunks before its first IDAT, or nil if it
    /// cannot be read or is not a PNG. Reads 4 KiB, where the keys of a thumbnail are, and more
    /// only if they go on past it.
    public static func read(path: String) -> [String: String]? {
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
    public static func parse(_ bytes: [UInt8]) -> [String: String]? { walk(bytes).keys }

    /// The keys, and whether the walk reached the image data (else `bytes` ended first).
    static func walk(_ bytes: [UInt8]) -> (keys: [String: String]?, complete: Bool) {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
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
