import Glibc  // sin, floor

/// MD5 (RFC 1321), for the one place a standard asks for it: the freedesktop thumbnail name is
/// the MD5 of the file's URI. Not for anything that needs a secure hash.
enum MD5 {
    /// The digest of `message` as 32 lowercase hex digits.
    static func hex(_ message: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: digest(message).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    static func digest(_ message: some Collection<UInt8>) -> [UInt8] {
        var bytes = Array(message)
        let bitLength = UInt64(bytes.count) &* 8
        bytes.append(0x80)
        while bytes.count % 64 != 56 { bytes.append(0) }
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }

        var a0: UInt32 = 0x6745_2301, b0: UInt32 = 0xefcd_ab89, c0: UInt32 = 0x98ba_dcfe, d0: UInt32 = 0x1032_5476
        var m = [UInt32](repeating: 0, count: 16)
        for block in stride(from: 0, to: bytes.count, by: 64) {
            for i in 0..<16 {
                let o = block + 4 * i
                m[i] = UInt32(bytes[o]) | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 3]) << 24
            }
            var a = a0, b = b0, c = c0, d = d0
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16: f = (b & c) | (~b & d); g = i
                case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * i) % 16
                }
                f = f &+ a &+ constants[i] &+ m[g]
                a = d
                d = c
                c = b
                b = b &+ (f << shifts[i] | f >> (32 - shifts[i]))
            }
            a0 = a0 &+ a
            b0 = b0 &+ b
            c0 = c0 &+ c
            d0 = d0 &+ d
        }
        return [a0, b0, c0, d0].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
    }

    private static let shifts: [UInt32] = [7, 12, 17, 22].repeated(4) + [5, 9, 14, 20].repeated(4) + [4, 11, 16, 23].repeated(4)
        + [6, 10, 15, 21].repeated(4)

    /// floor(|sin(i + 1)| × 2³²), as RFC 1321 defines its table (exact in double precision).
    private static let constants: [UInt32] = (0..<64).map { UInt32(floor(abs(sin(Double($0 + 1))) * 4_294_967_296)) }
}

extension Array {
    fileprivate func repeated(_ times: Int) -> [Element] { Array((0..<times).map { _ in self }.joined()) }
}
