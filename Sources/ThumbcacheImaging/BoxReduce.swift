/// Adds a row of bytes into 16-bit accumulators: the vertical half of the box pre-reduce.
///
/// 16 lanes at a time with `SIMD16<UInt16>` (widening 16 bytes per step); holds up to 257 rows
/// of 255 without overflow.
@inline(__always)
func accumulateRow(_ row: UnsafePointer<UInt8>, into sums: UnsafeMutablePointer<UInt16>, count: Int) {
    var i = 0
    let raw = UnsafeRawPointer(row)
    let out = UnsafeMutableRawPointer(sums)
    while i + 16 <= count {
        let bytes = raw.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
        let acc = out.loadUnaligned(fromByteOffset: i * 2, as: SIMD16<UInt16>.self)
        out.storeBytes(of: acc &+ SIMD16<UInt16>(truncatingIfNeeded: bytes), toByteOffset: i * 2, as: SIMD16<UInt16>.self)
        i += 16
    }
    while i < count {
        sums[i] &+= UInt16(row[i])
        i += 1
    }
}

/// The plain reference for ``accumulateRow(_:into:count:)``.
func accumulateRowScalar(_ row: UnsafePointer<UInt8>, into sums: UnsafeMutablePointer<UInt16>, count: Int) {
    for i in 0..<count { sums[i] &+= UInt16(row[i]) }
}

/// Premultiplies RGBA8 in place: c = round(c × a / 255).
@inline(__always)
func premultiplyRow(_ row: UnsafeMutablePointer<UInt8>, pixels: Int) {
    for p in 0..<pixels {
        let a = UInt32(row[4 * p + 3])
        if a == 255 { continue }
        for c in 0..<3 {
            let v = UInt32(row[4 * p + c]) * a + 128
            row[4 * p + c] = UInt8((v + (v >> 8)) >> 8)
        }
    }
}
