import ThumbcacheImaging

/// The planes of a decoded HEIF image — YCbCr 4:2:0, 4:2:2 or 4:4:4, planar RGB, or gray; 8 bits
/// or more (stored in 16) — as libheif, libde265 or dav1d deliver them, and how to turn a row of them
/// into RGBA: the matrix (BT.601, BT.709 or BT.2020 from the image's nclx profile, BT.601 when it
/// has none) and the range. Chroma is taken from the co-sited sample (the image is about to be shrunk).
package struct PlanarImage {
    package let width: Int
    package let height: Int
    package enum Model: Equatable { case ycbcr(subsampleX: Int, subsampleY: Int), rgb, gray }
    private let model: Model
    /// Up to three colour planes (Y/Cb/Cr, R/G/B, or Y) and the alpha plane: base and stride in bytes.
    private let planes: [(UnsafePointer<UInt8>, Int)]
    private let alpha: (UnsafePointer<UInt8>, Int)?
    /// Sample bits; above 8 each sample takes two bytes.
    private let bits: Int
    /// The matrix and range as 16.16 fixed-point factors: luma's scale and offset, then red from
    /// Cr, blue from Cb, and green from each (the limited range folded in).
    private let ys, yo, crR, cbB, cbG, crG: Int32

    package init(width: Int, height: Int, model: Model, planes: [(UnsafePointer<UInt8>, Int)], alpha: (UnsafePointer<UInt8>, Int)? = nil,
                 bits: Int, fullRange: Bool, coefficients: (kr: Float, kb: Float)) {
        (self.width, self.height, self.model, self.planes, self.alpha, self.bits) = (width, height, model, planes, alpha, bits)
        let (kr, kb) = coefficients
        let kg = 1 - kr - kb
        let cs: Float = fullRange ? 1 : 255 / 224
        (ys, yo) = fullRange ? (65536, 0) : (Int32((65536 * 255 / 219 as Float).rounded()), 16)
        crR = Int32((2 * (1 - kr) * cs * 65536).rounded())
        cbB = Int32((2 * (1 - kb) * cs * 65536).rounded())
        cbG = Int32((2 * kb * (1 - kb) / kg * cs * 65536).rounded())
        crG = Int32((2 * kr * (1 - kr) / kg * cs * 65536).rounded())
    }

    /// Kr and Kb of an nclx matrix (ISO/IEC 23091-2 numbers), BT.601's when unspecified; nil for
    /// the matrices this conversion does not do (YCgCo, constant luminance…).
    package static func coefficients(matrix: Int) -> (kr: Float, kb: Float)? {
        switch matrix {
        case 1: (0.2126, 0.0722)
        case 0, 2, 5, 6: (0.299, 0.114)
        case 9: (0.2627, 0.0593)
        default: nil
        }
    }

    /// Sample `x` of a row starting at `row`, scaled to 8 bits.
    @inline(__always)
    private func sample(_ row: UnsafePointer<UInt8>, _ x: Int) -> Int32 {
        if bits == 8 { return Int32(row[x]) }
        let v = Int32(UnsafeRawPointer(row).loadUnaligned(fromByteOffset: x * 2, as: UInt16.self))
        return (v * 255 + (1 << (bits - 1))) >> Int32(bits)
    }

    /// The rows a `shrink` of 1 or 2 makes: 2 averages each 2×2 block before converting (the
    /// conversion is affine, so this is the box pre-shrink the downscaler would do, at a quarter
    /// of the cost).
    package func size(shrink: Int) -> (width: Int, height: Int) { ((width + shrink - 1) / shrink, (height + shrink - 1) / shrink) }

    /// Output row `r` (at `shrink` 1 or 2) as RGBA into `out`. Fixed-point BT.601/709/2020.
    package func convert(row r: Int, shrink: Int, into out: UnsafeMutablePointer<UInt8>) {
        // What phones and cameras write, halved: 8-bit 4:2:0 without alpha, whole 2×2 blocks.
        if bits == 8, alpha == nil, shrink == 2, model == .ycbcr(subsampleX: 2, subsampleY: 2), 2 * r + 1 < height {
            let pairs = width / 2
            convertHalved420(row: r, pairs: pairs, into: out)
            if pairs < (width + 1) / 2 { convert(row: r, shrink: shrink, into: out, from: pairs) }
            return
        }
        convert(row: r, shrink: shrink, into: out, from: 0)
    }

    /// ``convert(row:shrink:into:)`` for 8-bit 4:2:0, `shrink` 2, the first `pairs` output pixels
    /// (two rows of two luma samples each, one chroma sample): the same arithmetic as the general
    /// path, without its per-pixel choices.
    private func convertHalved420(row r: Int, pairs: Int, into out: UnsafeMutablePointer<UInt8>) {
        let (ys, yo, crR, cbB, cbG, crG) = (ys, yo, crR, cbB, cbG, crG)
        @inline(__always) func clamp(_ v: Int32) -> UInt32 { UInt32(UInt8(clamping: (v &+ 32768) >> 16)) }
        let y0 = planes[0].0 + 2 * r * planes[0].1, y1 = y0 + planes[0].1
        let cb = planes[1].0 + r * planes[1].1, cr = planes[2].0 + r * planes[2].1
        let pixels = UnsafeMutableRawPointer(out)
        for x in 0..<pairs {
            let sum = Int32(y0[2 &* x]) &+ Int32(y0[2 &* x &+ 1]) &+ Int32(y1[2 &* x]) &+ Int32(y1[2 &* x &+ 1])
            let l = (((sum &+ 2) >> 2) &- yo) &* ys, u = Int32(cb[x]) &- 128, v = Int32(cr[x]) &- 128
            let rgba = clamp(l &+ crR &* v) | clamp(l &- cbG &* u &- crG &* v) &<< 8 | clamp(l &+ cbB &* u) &<< 16 | 0xFF00_0000
            pixels.storeBytes(of: rgba, toByteOffset: x &* 4, as: UInt32.self)
        }
    }

    /// Output row `r` from output pixel `first` on, the general way.
    func convert(row r: Int, shrink: Int, into out: UnsafeMutablePointer<UInt8>, from first: Int) {
        let outWidth = (width + shrink - 1) / shrink
        let top = r * shrink, bottom = min(r * shrink + shrink - 1, height - 1)
        func rowStart(_ plane: Int, _ y: Int) -> UnsafePointer<UInt8> {
            let p = planes[plane]
            if plane > 0, case .ycbcr(_, let sy) = model { return p.0 + (y / sy) * p.1 }
            return p.0 + y * p.1
        }
        let a0 = alpha.map { $0.0 + top * $0.1 }, a1 = alpha.map { $0.0 + bottom * $0.1 }
        @inline(__always) func clamp(_ v: Int32) -> UInt8 { UInt8(clamping: (v + 32768) >> 16) }
        let rows0 = (0..<planes.count).map { rowStart($0, top) }, rows1 = (0..<planes.count).map { rowStart($0, bottom) }
        let sx: Int
        if case .ycbcr(let x, _) = model { sx = x } else { sx = 1 }
        for x in first..<outWidth {
            let left = x * shrink, right = min(x * shrink + shrink - 1, width - 1)
            // The block's average of each plane (chroma at its own resolution).
            @inline(__always) func average(_ plane: Int, _ scale: Int) -> Int32 {
                if shrink == 1 { return sample(rows0[plane], left / scale) }
                return (sample(rows0[plane], left / scale) + sample(rows0[plane], right / scale)
                        + sample(rows1[plane], left / scale) + sample(rows1[plane], right / scale) + 2) >> 2
            }
            let o = x * 4
            switch model {
            case .gray:
                let v = clamp((average(0, 1) - yo) * ys)
                (out[o], out[o + 1], out[o + 2]) = (v, v, v)
            case .rgb:
                (out[o], out[o + 1], out[o + 2]) = (UInt8(average(0, 1)), UInt8(average(1, 1)), UInt8(average(2, 1)))
            case .ycbcr:
                let l = (average(0, 1) - yo) * ys, u = average(1, sx) - 128, v = average(2, sx) - 128
                (out[o], out[o + 1], out[o + 2]) = (clamp(l + crR * v), clamp(l - cbG * u - crG * v), clamp(l + cbB * u))
            }
            if let a0, let a1 {
                out[o + 3] = shrink == 1 ? UInt8(sample(a0, left))
                    : UInt8((sample(a0, left) + sample(a0, right) + sample(a1, left) + sample(a1, right) + 2) >> 2)
            } else {
                out[o + 3] = 255
            }
        }
    }
}
