#if canImport(Glibc)
import Glibc
#endif

/// Resizes an RGBA8 image that arrives one row at a time, top to bottom, keeping memory
/// proportional to the source width and the output size, never to the source height.
///
/// Steps, fused per row while it is hot in cache:
/// 1. premultiply alpha (only for images that have alpha);
/// 2. integer box pre-reduce by `boxX × boxY`, chosen to leave at least 2× for step 3
///    (rows are summed into 16-bit accumulators; columns summed when a row group completes);
/// 3. a separable windowed kernel (Lanczos-3 by default) on `SIMD4<Float>` pixels: horizontally
///    per reduced row, vertically by adding each reduced row into the few output rows whose
///    window covers it;
/// 4. unpremultiply, round, clamp.
///
/// With `linearLight`, steps 2 and 3 run on linear-light floats instead.
///
/// A crop rectangle in source pixels (for fill mode) is applied as rows arrive.
package final class StreamingDownscaler {
    package let sourceWidth: Int
    package let sourceHeight: Int
    package let outputWidth: Int
    package let outputHeight: Int
    package let crop: (x: Int, y: Int, width: Int, height: Int)
    package let boxX: Int
    package let boxY: Int
    let premultiply: Bool
    /// Resample in linear light: rows are decoded from sRGB to linear float (no integer box
    /// stage, whose 8-bit sums would be gamma-encoded), and output pixels encoded back.
    package let linearLight: Bool

    /// The crop is the output's size: rows are copied, not resampled (a drawing drawn at the
    /// output size, an image that fits its box), which a kernel at 1:1 would only blur by rounding.
    private let copies: Bool
    private let reducedWidth: Int
    private let reducedHeight: Int
    private let horizontal: FilterTable
    private let vertical: FilterTable

    private var sums: [UInt16]
    private var rowsInGroup = 0
    private var sourceRow = 0
    private var reducedRow = 0
    private var scratch: [UInt8]
    private var reduced: [SIMD4<Float>]
    private var filtered: [SIMD4<Float>]
    /// The sums of the output rows whose windows have begun and that are not yet emitted
    /// (`nextOutput ..< opened`), row `j` at `j % ringRows`: one buffer for all of them, where a
    /// dictionary of rows copied each row on every add (its value shared with the dictionary).
    private var ring: [SIMD4<Float>]
    private let ringRows: Int
    private var opened = 0
    private var nextOutput = 0
    private var output: [UInt8]

    /// - Parameters:
    ///   - sourceWidth: width of the rows that will be pushed, in pixels.
    ///   - sourceHeight: how many rows will be pushed.
    ///   - outputWidth: width of the result.
    ///   - outputHeight: height of the result.
    ///   - crop: the source rectangle to resize (default: all of it).
    ///   - kernel: the windowed filter after the box pre-reduce.
    ///   - premultiply: true if the source has meaningful alpha.
    ///   - linearLight: resample in linear light instead of gamma-encoded values.
    package init(
        sourceWidth: Int, sourceHeight: Int, outputWidth: Int, outputHeight: Int,
        crop: (x: Int, y: Int, width: Int, height: Int)? = nil, kernel: ResamplingKernel = .lanczos3, premultiply: Bool,
        linearLight: Bool = false
    ) {
        precondition(sourceWidth > 0 && sourceHeight > 0 && outputWidth > 0 && outputHeight > 0)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
        let crop = crop ?? (0, 0, sourceWidth, sourceHeight)
        self.crop = crop
        self.premultiply = premultiply
        self.linearLight = linearLight
        copies = crop.width == outputWidth && crop.height == outputHeight
        boxX = linearLight ? 1 : Self.boxFactor(source: crop.width, output: outputWidth)
        boxY = linearLight ? 1 : Self.boxFactor(source: crop.height, output: outputHeight)
        reducedWidth = (crop.width + boxX - 1) / boxX
        reducedHeight = (crop.height + boxY - 1) / boxY
        // Copied rows need no tables, whose weights take a sin per tap (a 1024-pixel preview's, 13 000).
        horizontal = FilterTable.cached(sourceLength: copies ? 1 : reducedWidth, outputLength: copies ? 1 : outputWidth, kernel: kernel)
        vertical = FilterTable.cached(sourceLength: copies ? 1 : reducedHeight, outputLength: copies ? 1 : outputHeight, kernel: kernel)
        sums = [UInt16](repeating: 0, count: crop.width * 4)
        scratch = premultiply ? [UInt8](repeating: 0, count: crop.width * 4) : []
        reduced = [SIMD4<Float>](repeating: .zero, count: reducedWidth)
        filtered = [SIMD4<Float>](repeating: .zero, count: outputWidth)
        ringRows = copies ? 0 : Self.rowsOpenAtOnce(vertical, sourceRows: reducedHeight)
        ring = [SIMD4<Float>](repeating: .zero, count: ringRows * outputWidth)
        output = [UInt8](repeating: 0, count: outputWidth * outputHeight * 4)
    }

    /// The integer box factor that leaves at least 2× for the windowed kernel (at most 256, so
    /// that 16-bit row sums cannot overflow).
    static func boxFactor(source: Int, output: Int) -> Int {
        max(1, min(256, source / (2 * output)))
    }

    /// True once every output row is complete.
    package var isComplete: Bool { nextOutput == outputHeight }

    /// Feeds the next source row: `sourceWidth` RGBA8 pixels.
    package func push(_ row: UnsafePointer<UInt8>) {
        defer { sourceRow += 1 }
        guard sourceRow >= crop.y, sourceRow < crop.y + crop.height else { return }
        if copies {
            output.withUnsafeMutableBufferPointer { o in
                (o.baseAddress! + nextOutput * outputWidth * 4).update(from: row + crop.x * 4, count: outputWidth * 4)
            }
            nextOutput += 1
            return
        }
        if linearLight {
            pushLinear(row + crop.x * 4)
            return
        }
        var pixels = row + crop.x * 4
        let count = crop.width * 4
        if premultiply {
            scratch.withUnsafeMutableBufferPointer { s in
                s.baseAddress!.update(from: pixels, count: count)
                premultiplyRow(s.baseAddress!, pixels: crop.width)
            }
        }
        if boxX == 1 && boxY == 1 {
            // No box: the row is the reduced row, the same floats a group of one would average to,
            // without the sums' widening, zeroing and narrowing (a 4× shrink after a 1/8 JPEG decode).
            scratch.withUnsafeBufferPointer { s in
                if premultiply { pixels = s.baseAddress! }
                reduced.withUnsafeMutableBufferPointer { out in
                    for x in 0..<crop.width {
                        let p = pixels + 4 * x
                        out[x] = SIMD4<Float>(Float(p[0]), Float(p[1]), Float(p[2]), Float(p[3]))
                    }
                }
            }
            filterHorizontally()
            addVertically(reducedRow)
            reducedRow += 1
            return
        }
        scratch.withUnsafeBufferPointer { s in
            if premultiply { pixels = s.baseAddress! }
            sums.withUnsafeMutableBufferPointer { accumulateRow(pixels, into: $0.baseAddress!, count: count) }
        }
        rowsInGroup += 1
        let lastSourceRow = sourceRow == crop.y + crop.height - 1
        if rowsInGroup == boxY || lastSourceRow {
            finishGroup()
        }
    }

    /// Linear light: decode the row to linear float (premultiplied), filter, accumulate.
    private func pushLinear(_ pixels: UnsafePointer<UInt8>) {
        let table = SRGB.toLinear
        reduced.withUnsafeMutableBufferPointer { out in
            for x in 0..<crop.width {
                let a = Float(pixels[4 * x + 3])
                var p = SIMD4<Float>(table[Int(pixels[4 * x])], table[Int(pixels[4 * x + 1])], table[Int(pixels[4 * x + 2])], 255)
                if premultiply { p = SIMD4<Float>(p[0] * a / 255, p[1] * a / 255, p[2] * a / 255, a) }
                out[x] = p
            }
        }
        filterHorizontally()
        addVertically(reducedRow)
        reducedRow += 1
    }

    /// Averages the summed rows over the box columns and passes the reduced row on.
    private func finishGroup() {
        sums.withUnsafeBufferPointer { s in
            reduced.withUnsafeMutableBufferPointer { out in
                let raw = UnsafeRawPointer(s.baseAddress!)
                for x in 0..<reducedWidth {
                    let first = x * boxX
                    let n = min(boxX, crop.width - first)
                    // Sum in integers (one pixel = 4 × UInt16 = 8 bytes), convert once.
                    var total = SIMD4<UInt32>.zero
                    for k in 0..<n {
                        total &+= SIMD4<UInt32>(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: (first + k) * 8, as: SIMD4<UInt16>.self))
                    }
                    let sum = SIMD4<Float>(Float(total[0]), Float(total[1]), Float(total[2]), Float(total[3]))
                    out[x] = sum * (1 / Float(n * rowsInGroup))
                }
            }
        }
        sums.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        rowsInGroup = 0
        filterHorizontally()
        addVertically(reducedRow)
        reducedRow += 1
    }

    private func filterHorizontally() {
        reduced.withUnsafeBufferPointer { src in
            filtered.withUnsafeMutableBufferPointer { dst in
                horizontal.weights.withUnsafeBufferPointer { w in
                    horizontal.starts.withUnsafeBufferPointer { starts in
                        horizontal.offsets.withUnsafeBufferPointer { offsets in
                            horizontal.counts.withUnsafeBufferPointer { counts in
                                let s = src.baseAddress!, weights = w.baseAddress!
                                for x in 0..<outputWidth {
                                    let p = s + starts[x]
                                    let q = weights + offsets[x]
                                    let n = counts[x]
                                    // Four sums side by side: one sum's additions wait for each
                                    // other (4 cycles each), and a window at a 4× shrink has 24 taps.
                                    // Multiply then add: `addProduct` is a fused multiply-add, which
                                    // on baseline x86-64 (no FMA instruction) is a libm call per lane.
                                    var t0 = SIMD4<Float>.zero, t1 = t0, t2 = t0, t3 = t0
                                    var k = 0
                                    while k + 4 <= n {
                                        t0 += p[k] * q[k]
                                        t1 += p[k + 1] * q[k + 1]
                                        t2 += p[k + 2] * q[k + 2]
                                        t3 += p[k + 3] * q[k + 3]
                                        k += 4
                                    }
                                    while k < n {
                                        t0 += p[k] * q[k]
                                        k += 1
                                    }
                                    dst[x] = (t0 + t1) + (t2 + t3)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Adds reduced row `r` into every open output row whose window covers it; emits the rows it completes.
    private func addVertically(_ r: Int) {
        let width = outputWidth
        ring.withUnsafeMutableBufferPointer { ring in
            filtered.withUnsafeBufferPointer { f in
                var j = nextOutput
                while j < outputHeight && vertical.starts[j] <= r {
                    let start = vertical.starts[j]
                    if r < start + vertical.counts[j] {
                        let a = ring.baseAddress! + (j % ringRows) * width
                        if j == opened {
                            a.update(repeating: .zero, count: width)
                            opened += 1
                        }
                        let weight = vertical.weights[vertical.offsets[j] + r - start]
                        for x in 0..<width { a[x] += f[x] * weight }
                    }
                    j += 1
                }
            }
        }
        while nextOutput < opened && vertical.starts[nextOutput] + vertical.counts[nextOutput] - 1 <= r {
            emit(row: nextOutput)
            nextOutput += 1
        }
    }

    /// The most output rows open at once (begun and not yet emitted) as `sourceRows` rows arrive:
    /// what ``addVertically(_:)`` does, without the sums.
    static func rowsOpenAtOnce(_ table: FilterTable, sourceRows: Int) -> Int {
        let rows = table.starts.count
        var (most, opened, emitted) = (1, 0, 0)
        for r in 0..<sourceRows {
            while opened < rows && table.starts[opened] <= r { opened += 1 }
            most = max(most, opened - emitted)
            while emitted < opened && table.starts[emitted] + table.counts[emitted] - 1 <= r { emitted += 1 }
        }
        return most
    }

    private func emit(row y: Int) {
        ring.withUnsafeBufferPointer { ring in
            output.withUnsafeMutableBufferPointer { out in emit(ring.baseAddress! + (y % ringRows) * outputWidth, row: y, into: out) }
        }
    }

    private func emit(_ acc: UnsafePointer<SIMD4<Float>>, row y: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
        let base = y * outputWidth * 4
        for x in 0..<outputWidth {
            var p = acc[x]
            let a = min(max(p[3], 0), 255)
            if premultiply {
                // Alpha that rounds to 0 is transparent: dividing by a tiny ringing residue
                // would give infinities, and 0 × ∞ is NaN.
                p = a >= 0.5 ? p * (255 / a) : .zero
            }
            if linearLight { p = SIMD4<Float>(SRGB.encode(p[0]), SRGB.encode(p[1]), SRGB.encode(p[2]), p[3]) }
            if premultiply { p[3] = a } else { p[3] = 255 }
            // Clamp, then round half up by adding 0.5 and truncating (one vector conversion,
            // no libm call per lane).
            // NaN-safe: a NaN is not ≥ 0, so it becomes 0 rather than trapping the conversion below.
            p = p.replacing(with: 0, where: .!(p .>= 0)).replacing(with: 255, where: p .> 255)
            // Lane by lane: `SIMD4<Int32>(SIMD4<Float>)` is a generic, unspecialised conversion.
            p += 0.5
            out[base + 4 * x] = UInt8(truncatingIfNeeded: Int32(p[0]))
            out[base + 4 * x + 1] = UInt8(truncatingIfNeeded: Int32(p[1]))
            out[base + 4 * x + 2] = UInt8(truncatingIfNeeded: Int32(p[2]))
            out[base + 4 * x + 3] = UInt8(truncatingIfNeeded: Int32(p[3]))
        }
    }

    /// The resized image; call after the last row.
    package func finish() -> RGBAImage {
        RGBAImage(width: outputWidth, height: outputHeight, pixels: output, hasAlpha: premultiply)
    }
}

/// 8-bit RGBA pixels, rows top to bottom with no padding, straight (not premultiplied) alpha.
public struct RGBAImage: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]
    /// False if every pixel is opaque.
    public var hasAlpha: Bool

    public init(width: Int, height: Int, pixels: [UInt8], hasAlpha: Bool) {
        precondition(pixels.count == width * height * 4)
        self.width = width
        self.height = height
        self.pixels = pixels
        self.hasAlpha = hasAlpha
    }
}

/// sRGB transfer function, on values scaled 0…255.
enum SRGB {
    /// Linear value (0…255) of each 8-bit sRGB code.
    static let toLinear: [Float] = (0..<256).map { decode(Float($0)) }

    static func decode(_ v: Float) -> Float {
        let c = v / 255
        return 255 * (c <= 0.04045 ? c / 12.92 : powf((c + 0.055) / 1.055, 2.4))
    }

    static func encode(_ v: Float) -> Float {
        let c = min(max(v / 255, 0), 1)
        return 255 * (c <= 0.0031308 ? c * 12.92 : 1.055 * powf(c, 1 / 2.4) - 0.055)
    }
}
