import Testing
@testable import ThumbcacheCodecSupport

/// The halved 4:2:0 conversion (what phones write, at half size) gives the general path's bytes.
struct PlanarImageTests {
    @Test(arguments: [(64, 48), (37, 21), (2, 2), (3, 5)])
    func halvedFourTwoZeroIsTheGeneralConversion(width: Int, height: Int) {
        var seed: UInt32 = UInt32(width * 131 + height)
        func noise(_ count: Int) -> [UInt8] {
            (0..<count).map { _ in
                seed = seed &* 1_664_525 &+ 1_013_904_223
                return UInt8(truncatingIfNeeded: seed >> 24)
            }
        }
        let (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
        // Strides wider than the rows, as decoders pad them.
        let luma = noise((width + 5) * height), cb = noise((cw + 3) * ch), cr = noise((cw + 3) * ch)
        for (full, matrix) in [(false, 1), (true, 5), (false, 9)] {
            luma.withUnsafeBufferPointer { y in
                cb.withUnsafeBufferPointer { u in
                    cr.withUnsafeBufferPointer { v in
                        let image = PlanarImage(width: width, height: height, model: .ycbcr(subsampleX: 2, subsampleY: 2),
                                                planes: [(y.baseAddress!, width + 5), (u.baseAddress!, cw + 3), (v.baseAddress!, cw + 3)],
                                                bits: 8, fullRange: full, coefficients: PlanarImage.coefficients(matrix: matrix)!)
                        let (outWidth, outHeight) = image.size(shrink: 2)
                        for r in 0..<outHeight {
                            var fast = [UInt8](repeating: 0, count: outWidth * 4), general = fast
                            fast.withUnsafeMutableBufferPointer { image.convert(row: r, shrink: 2, into: $0.baseAddress!) }
                            general.withUnsafeMutableBufferPointer { image.convert(row: r, shrink: 2, into: $0.baseAddress!, from: 0) }
                            #expect(fast == general, "\(width)×\(height), row \(r), full range \(full), matrix \(matrix)")
                        }
                    }
                }
            }
        }
    }
}

/// A drawing's premultiplied native ARGB words (cairo's, Splash's) become straight RGBA bytes,
/// on the all-opaque path (a page) and the one with translucent edges (a drawing).
struct DrawnCanvasTests {
    static func drawn(_ words: [UInt32]) throws -> [UInt8] {
        try RGBABuffer.drawnAsARGB32(width: words.count, height: 1, path: "drawing") { pixels, _, _ in
            words.withUnsafeBytes { UnsafeMutableRawPointer(pixels!).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            return 0
        }.pixels
    }

    @Test func opaqueWordsSwapRedAndBlue() throws {
        #expect(try Self.drawn([0xFF11_2233, 0xFFFF_0000, 0xFF00_00FF, 0x0000_0000])
                == [0x11, 0x22, 0x33, 0xFF, 0xFF, 0, 0, 0xFF, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0])
    }

    @Test func translucentWordsAreUnpremultiplied() throws {
        // Half-covered blue (premultiplied 128 of 128), 200 of alpha over red 100, and an opaque pixel beside them.
        #expect(try Self.drawn([0x8000_0080, 0xC864_0000, 0xFF10_2030])
                == [0, 0, 0xFF, 0x80, 128, 0, 0, 0xC8, 0x10, 0x20, 0x30, 0xFF])
    }
}
