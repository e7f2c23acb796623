import CThumbcacheXXHash

/// The XXH3-128 hash of a file's bytes: the identity of its content.
///
/// Its canonical form (its 16 bytes, ``hex``) is the one `xxhsum -H2` prints: the high 64 bits then
/// the low 64 bits, each big-endian. Keys built from it therefore sort by content.
package struct ContentHash: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads the 16-byte canonical form.
    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 16 else { return nil }
        high = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// Parses 32 hexadecimal digits.
    @inlinable
    package init?(hex: some StringProtocol) {
        // One pass over the bytes, specialized where it is called: `serve` parses a hash per request.
        var high: UInt64 = 0, low: UInt64 = 0, count = 0
        for byte in hex.utf8 {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            guard count < 32 else { return nil }
            if count < 16 { high = high << 4 | UInt64(digit) } else { low = low << 4 | UInt64(digit) }
            count += 1
        }
        guard count == 32 else { return nil }
        self.init(high: high, low: low)
    }

    /// The hash of bytes in memory.
    package static func of(_ bytes: UnsafeRawBufferPointer) -> ContentHash {
        var h = ContentHash(high: 0, low: 0)
        cxxh_oneshot(bytes.baseAddress, bytes.count, &h.high, &h.low)
        return h
    }

    /// The hash of bytes in memory.
    package static func of(_ bytes: [UInt8]) -> ContentHash {
        bytes.withUnsafeBytes { of($0) }
    }

    /// The 16-byte canonical form.
    package var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        out.withUnsafeMutableBytes { write(to: $0) }
        return out
    }

    /// Writes the 16-byte canonical form at the start of `buffer`.
    package func write(to buffer: UnsafeMutableRawBufferPointer) {
        buffer.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
        buffer.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
    }

    /// 32 lowercase hexadecimal digits.
    package var hex: String {
        func pad(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return pad(high) + pad(low)
    }

    package var description: String { hex }

    package static func < (a: ContentHash, b: ContentHash) -> Bool {
        (a.high, a.low) < (b.high, b.low)
    }
}
