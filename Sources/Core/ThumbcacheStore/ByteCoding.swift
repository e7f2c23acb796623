/// Appends fixed-width integers to a byte array (little-endian unless stated).
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }
    mutating func f32(_ v: Float) { u32(v.bitPattern) }
    mutating func u32BE(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64BE(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { bytes.append(contentsOf: $0) } }
    mutating func hash(_ h: ContentHash) {
        u64BE(h.high)
        u64BE(h.low)
    }
    mutating func raw(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }
}

/// Reads fixed-width integers from a byte view, failing (nil) instead of reading past its end.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    private mutating func load<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard remaining >= MemoryLayout<T>.size else { return nil }
        defer { offset += MemoryLayout<T>.size }
        return bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    mutating func u8() -> UInt8? { load(UInt8.self) }
    mutating func u16() -> UInt16? { load(UInt16.self).map { UInt16(littleEndian: $0) } }
    mutating func u32() -> UInt32? { load(UInt32.self).map { UInt32(littleEndian: $0) } }
    mutating func u64() -> UInt64? { load(UInt64.self).map { UInt64(littleEndian: $0) } }
    mutating func i64() -> Int64? { u64().map { Int64(bitPattern: $0) } }
    mutating func f32() -> Float? { u32().map { Float(bitPattern: $0) } }
    mutating func u32BE() -> UInt32? { load(UInt32.self).map { UInt32(bigEndian: $0) } }
    mutating func u64BE() -> UInt64? { load(UInt64.self).map { UInt64(bigEndian: $0) } }
    mutating func hash() -> ContentHash? {
        guard let high = u64BE(), let low = u64BE() else { return nil }
        return ContentHash(high: high, low: low)
    }
    mutating func view(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }
    mutating func rest() -> UnsafeRawBufferPointer { view(remaining)! }
}
