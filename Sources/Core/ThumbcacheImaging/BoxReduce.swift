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

/// Averages 2×2 blocks of RGBA8: two source rows of `2 × pixels` pixels into one row of
/// `pixels` pixels, rounding halves up. Each pixel is one `UInt32` lane; even and odd pixels are
/// split with `evenHalf`/`oddHalf`, and bytes are added in 16-bit fields (masks and shifts), so
/// the loop is four loads, a few adds and one store per 4 output pixels.
package func boxReduce2x2(
    top: UnsafePointer<UInt8>, bottom: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, pixels: Int
) {
    let mask = SIMD4<UInt32>(repeating: 0x00FF_00FF)
    let two = SIMD4<UInt32>(repeating: 0x0002_0002)
    let t = UnsafeRawPointer(top), b = UnsafeRawPointer(bottom), o = UnsafeMutableRawPointer(out)
    var i = 0
    while i + 4 <= pixels {
        let a = t.loadUnaligned(fromByteOffset: i * 8, as: SIMD8<UInt32>.self)
        let c = b.loadUnaligned(fromByteOffset: i * 8, as: SIMD8<UInt32>.self)
        let (ae, ao, ce, co) = (a.evenHalf, a.oddHalf, c.evenHalf, c.oddHalf)
        let low = (ae & mask) &+ (ao & mask) &+ (ce & mask) &+ (co & mask) &+ two
        let high = ((ae &>> 8) & mask) &+ ((ao &>> 8) & mask) &+ ((ce &>> 8) & mask) &+ ((co &>> 8) & mask) &+ two
        let result = ((low &>> 2) & mask) | (((high &>> 2) & mask) &<< 8)
        o.storeBytes(of: result, toByteOffset: i * 4, as: SIMD4<UInt32>.self)
        i += 4
    }
    if i < pixels {
        boxReduce2x2Scalar(top: top + i * 8, bottom: bottom + i * 8, into: out + i * 4, pixels: pixels - i)
    }
}

/// The plain reference for ``boxReduce2x2(top:bottom:into:pixels:)``.
package func boxReduce2x2Scalar(
    top: UnsafePointer<UInt8>, bottom: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, pixels: Int
) {
    for p in 0..<pixels {
        for c in 0..<4 {
            let sum = Int(top[8 * p + c]) + Int(top[8 * p + 4 + c]) + Int(bottom[8 * p + c]) + Int(bottom[8 * p + 4 + c])
            out[4 * p + c] = UInt8((sum + 2) >> 2)
        }
    }
}
