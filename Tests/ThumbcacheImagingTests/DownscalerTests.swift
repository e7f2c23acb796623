import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

/// The plain float64 reference: premultiplied, separable, no box pre-reduce.
func referenceResize(_ image: RGBAImage, width: Int, height: Int, kernel: ResamplingKernel = .lanczos3) -> RGBAImage {
    // For each output sample: the first source index and the weights from there (edges clamped).
    func table(_ source: Int, _ output: Int) -> [(Int, [Double])] {
        let scale = Double(output) / Double(source)
        let stretch = max(1 / scale, 1)
        let support = kernel.support * stretch
        return (0..<output).map { x in
            let center = (Double(x) + 0.5) / scale - 0.5
            let left = Int((center - support).rounded(.up)), right = Int((center + support).rounded(.down))
            let first = max(0, min(left, source - 1)), last = max(0, min(right, source - 1))
            var w = [Double](repeating: 0, count: last - first + 1)
            var sum = 0.0
            for i in left...right {
                let k = kernel.weight((Double(i) - center) / stretch)
                w[max(0, min(i, source - 1)) - first] += k
                sum += k
            }
            return (first, w.map { $0 / sum })
        }
    }
    let h = table(image.width, width), v = table(image.height, height)
    var pre = [Double](repeating: 0, count: image.width * image.height * 4)
    for p in 0..<image.width * image.height {
        let a = Double(image.pixels[4 * p + 3]) / 255
        for c in 0..<3 { pre[4 * p + c] = Double(image.pixels[4 * p + c]) * (image.hasAlpha ? a : 1) }
        pre[4 * p + 3] = Double(image.pixels[4 * p + 3])
    }
    var rows = [Double](repeating: 0, count: width * image.height * 4)
    for y in 0..<image.height {
        for x in 0..<width {
            for (k, w) in h[x].1.enumerated() {
                let i = h[x].0 + k
                for c in 0..<4 { rows[(y * width + x) * 4 + c] += w * pre[(y * image.width + i) * 4 + c] }
            }
        }
    }
    var out = [UInt8](repeating: 0, count: width * height * 4)
    for y in 0..<height {
        for x in 0..<width {
            var p = [0.0, 0, 0, 0]
            for (k, w) in v[y].1.enumerated() {
                let i = v[y].0 + k
                for c in 0..<4 { p[c] += w * rows[(i * width + x) * 4 + c] }
            }
            let a = min(max(p[3], 0), 255)
            for c in 0..<3 {
                let value = image.hasAlpha ? (a > 0 ? p[c] * 255 / a : 0) : p[c]
                out[(y * width + x) * 4 + c] = UInt8(min(max(value, 0), 255).rounded())
            }
            out[(y * width + x) * 4 + 3] = image.hasAlpha ? UInt8(a.rounded()) : 255
        }
    }
    return RGBAImage(width: width, height: height, pixels: out, hasAlpha: image.hasAlpha)
}

func streamingResize(_ image: RGBAImage, width: Int, height: Int, kernel: ResamplingKernel = .lanczos3) -> RGBAImage {
    let scaler = StreamingDownscaler(
        sourceWidth: image.width, sourceHeight: image.height, outputWidth: width, outputHeight: height, kernel: kernel,
        premultiply: image.hasAlpha)
    image.pixels.withUnsafeBufferPointer { p in
        for y in 0..<image.height { scaler.push(p.baseAddress! + y * image.width * 4) }
    }
    #expect(scaler.isComplete)
    return scaler.finish()
}

struct DownscalerTests {
    /// The SIMD row accumulator equals the scalar reference on odd lengths, byte for byte.
    @Test(arguments: [1, 3, 15, 16, 17, 31, 33, 4 * 1001, 4 * 4001 + 3])
    func simdAccumulateMatchesScalar(count: Int) {
        var generator = SeededRandom.forTest()
        let rows = (0..<5).map { _ in (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        var simd = [UInt16](repeating: 0, count: count)
        var scalar = [UInt16](repeating: 0, count: count)
        for row in rows {
            row.withUnsafeBufferPointer { r in
                simd.withUnsafeMutableBufferPointer { accumulateRow(r.baseAddress!, into: $0.baseAddress!, count: count) }
                scalar.withUnsafeMutableBufferPointer { accumulateRowScalar(r.baseAddress!, into: $0.baseAddress!, count: count) }
            }
        }
        #expect(simd == scalar)
    }

    /// Against the float64 reference on a photograph-like image, for odd sizes, both kernels,
    /// with and without alpha: PSNR ≥ 40 dB. The enlargements keep dozens of output rows open at
    /// once (each source row reaches that many), which the open rows' ring must hold.
    @Test(arguments: [(797, 531, 256, 170), (401, 299, 64, 48), (321, 241, 129, 97), (255, 255, 100, 100),
                      (40, 30, 256, 192), (23, 17, 300, 222)])
    func matchesTheFloat64Reference(sw: Int, sh: Int, dw: Int, dh: Int) {
        for alpha in [false, true] {
            for kernel in ResamplingKernel.allCases {
                let image = photoLikeImage(width: sw, height: sh, alpha: alpha)
                let fast = streamingResize(image, width: dw, height: dh, kernel: kernel)
                let reference = referenceResize(image, width: dw, height: dh, kernel: kernel)
                let quality = psnr(fast, reference)
                #expect(quality >= 40, "\(sw)×\(sh)→\(dw)×\(dh) \(kernel) alpha \(alpha): \(quality) dB")
            }
        }
    }

    @Test func boxFactorLeavesAtLeastTwice() {
        #expect(StreamingDownscaler.boxFactor(source: 4000, output: 256) == 7)
        #expect(StreamingDownscaler.boxFactor(source: 511, output: 256) == 1)
        #expect(StreamingDownscaler.boxFactor(source: 1_000_000, output: 10) == 256)
    }

    /// Fully transparent pixels must not bleed their colour into visible ones.
    @Test func transparentColourDoesNotBleed() {
        var pixels = [UInt8](repeating: 0, count: 64 * 64 * 4)
        for p in 0..<64 * 64 {
            let visible = p % 64 < 32
            pixels[4 * p] = visible ? 0 : 255  // invisible half is pure red
            pixels[4 * p + 1] = visible ? 200 : 0
            pixels[4 * p + 3] = visible ? 255 : 0
        }
        let out = streamingResize(RGBAImage(width: 64, height: 64, pixels: pixels, hasAlpha: true), width: 8, height: 8)
        for y in 0..<8 {
            for x in 0..<8 where out.pixels[(y * 8 + x) * 4 + 3] > 0 {
                #expect(out.pixels[(y * 8 + x) * 4] <= 2, "red bled into (\(x), \(y))")
            }
        }
    }

    /// A crop the size of the output is copied exactly, faint alpha included, which premultiplied
    /// 8-bit resampling would round away (a pixel of 200 red at alpha 3 came back as 170).
    @Test func sameSizeIsCopiedExactly() {
        var pixels = [UInt8](repeating: 0, count: 40 * 30 * 4)
        for i in pixels.indices { pixels[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 11) }
        for p in stride(from: 3, to: pixels.count, by: 16) { pixels[p] = 3 }
        let image = RGBAImage(width: 40, height: 30, pixels: pixels, hasAlpha: true)
        #expect(streamingResize(image, width: 40, height: 30) == image)
        let scaler = StreamingDownscaler(sourceWidth: 50, sourceHeight: 40, outputWidth: 40, outputHeight: 30,
                                         crop: (5, 7, 40, 30), premultiply: true)
        var framed = [UInt8](repeating: 9, count: 50 * 40 * 4)
        for y in 0..<30 { framed.replaceSubrange(((y + 7) * 50 + 5) * 4..<((y + 7) * 50 + 45) * 4, with: pixels[y * 160..<(y + 1) * 160]) }
        framed.withUnsafeBufferPointer { f in for y in 0..<40 { scaler.push(f.baseAddress! + y * 200) } }
        #expect(scaler.isComplete && scaler.finish() == image)
    }

    /// Memory does not grow with the source height: only a few output rows are open at once.
    @Test func tallImagesStream() {
        let scaler = StreamingDownscaler(sourceWidth: 64, sourceHeight: 40_000, outputWidth: 4, outputHeight: 256, premultiply: false)
        let row = [UInt8](repeating: 128, count: 64 * 4)
        row.withUnsafeBufferPointer { r in
            for _ in 0..<40_000 { scaler.push(r.baseAddress!) }
        }
        let out = scaler.finish()
        #expect(out.width == 4 && out.height == 256)
        #expect(out.pixels.allSatisfy { $0 == 128 || $0 == 255 })
    }
}

struct BoxReduce2x2Tests {
    @Test(arguments: [1, 3, 4, 5, 7, 8, 9, 1001, 2000])
    func simdMatchesScalarByteForByte(pixels: Int) {
        var generator = SeededRandom.forTest()
        let top = (0..<pixels * 8).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let bottom = (0..<pixels * 8).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var simd = [UInt8](repeating: 0, count: pixels * 4)
        var scalar = [UInt8](repeating: 0, count: pixels * 4)
        top.withUnsafeBufferPointer { t in
            bottom.withUnsafeBufferPointer { b in
                simd.withUnsafeMutableBufferPointer { boxReduce2x2(top: t.baseAddress!, bottom: b.baseAddress!, into: $0.baseAddress!, pixels: pixels) }
                scalar.withUnsafeMutableBufferPointer { boxReduce2x2Scalar(top: t.baseAddress!, bottom: b.baseAddress!, into: $0.baseAddress!, pixels: pixels) }
            }
        }
        #expect(simd == scalar)
    }

    @Test func extremesDoNotOverflow() {
        let white = [UInt8](repeating: 255, count: 64)
        var out = [UInt8](repeating: 0, count: 32)
        white.withUnsafeBufferPointer { w in
            out.withUnsafeMutableBufferPointer { boxReduce2x2(top: w.baseAddress!, bottom: w.baseAddress!, into: $0.baseAddress!, pixels: 8) }
        }
        #expect(out.allSatisfy { $0 == 255 })
    }
}

struct LinearLightTests {
    /// A black-and-white checkerboard averages to mid-grey in light (sRGB ≈ 188), not to the
    /// sRGB code halfway between (128).
    @Test func checkerboardAveragesInLight() {
        var pixels = [UInt8](repeating: 255, count: 64 * 64 * 4)
        for y in 0..<64 {
            for x in 0..<64 where (x + y) % 2 == 0 {
                for c in 0..<3 { pixels[(y * 64 + x) * 4 + c] = 0 }
            }
        }
        let image = RGBAImage(width: 64, height: 64, pixels: pixels, hasAlpha: false)
        for linear in [false, true] {
            let scaler = StreamingDownscaler(
                sourceWidth: 64, sourceHeight: 64, outputWidth: 8, outputHeight: 8, premultiply: false, linearLight: linear)
            image.pixels.withUnsafeBufferPointer { p in
                for y in 0..<64 { scaler.push(p.baseAddress! + y * 256) }
            }
            let centre = Int(scaler.finish().pixels[(4 * 8 + 4) * 4])
            if linear { #expect((185...191).contains(centre), "linear: \(centre)") } else { #expect((126...130).contains(centre), "gamma: \(centre)") }
        }
    }
}

struct DownscalerRobustnessTests {
    /// Sparse, faint alpha makes the kernel's ringing leave tiny alphas; unpremultiplying by them
    /// must not produce NaN (which once trapped the conversion to bytes, found on /usr/share).
    @Test func faintSparseAlphaNeverTraps() {
        var generator = SeededRandom.forTest()
        for _ in 0..<200 {
            let w = Int.random(in: 3...90, using: &generator), h = Int.random(in: 3...90, using: &generator)
            var pixels = [UInt8](repeating: 0, count: w * h * 4)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let p = Int.random(in: 0..<w * h, using: &generator)
                pixels[4 * p + 3] = UInt8.random(in: 1...3, using: &generator)
                pixels[4 * p] = UInt8.random(in: 0...255, using: &generator)
            }
            let ow = Int.random(in: 1...w, using: &generator), oh = Int.random(in: 1...h, using: &generator)
            for kernel in ResamplingKernel.allCases {
                let out = streamingResize(RGBAImage(width: w, height: h, pixels: pixels, hasAlpha: true), width: ow, height: oh, kernel: kernel)
                #expect(out.pixels.count == ow * oh * 4)
            }
        }
    }
}

struct IdentityResampleTests {
    /// At 1:1 (an icon smaller than the box) every pixel comes back exactly, transparent ones
    /// included. Kernel residues once gave transparent pixels alphas of 1e-33, hence invented
    /// colours, and NaN (a trap) when smaller still: found on an Adwaita 24×24 icon.
    @Test func oneToOneIsExact() {
        let w = 24, h = 24
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        for y in 6..<18 {
            for x in 4..<20 {
                let i = (y * w + x) * 4
                pixels[i] = 255
                pixels[i + 3] = UInt8((x + y) % 12 + 2)  // faint alpha 2…13 beside transparent pixels
            }
        }
        let image = RGBAImage(width: w, height: h, pixels: pixels, hasAlpha: true)
        // Lanczos interpolates: 1:1 is the identity.
        let out = streamingResize(image, width: w, height: h, kernel: .lanczos3)
        #expect(out.pixels == pixels)
        // Mitchell (B = 1/3) blurs a little even at 1:1, but never invents colour where alpha is 0.
        let soft = streamingResize(image, width: w, height: h, kernel: .mitchell)
        for p in 0..<w * h where soft.pixels[4 * p + 3] == 0 {
            #expect(soft.pixels[4 * p..<4 * p + 3].allSatisfy { $0 == 0 }, "pixel \(p)")
        }
    }
}
