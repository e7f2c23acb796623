#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The windowed kernel of the final resampling step.
package enum ResamplingKernel: String, Sendable, Hashable, Codable, CaseIterable {
    /// Lanczos with 3 lobes: sharp, the default.
    case lanczos3
    /// Mitchell–Netravali cubic (B = C = 1/3): softer, no ringing.
    case mitchell

    /// Half-width of the kernel, in output-sample units.
    package var support: Double {
        switch self {
        case .lanczos3: 3
        case .mitchell: 2
        }
    }

    package func weight(_ x: Double) -> Double {
        let x = abs(x)
        switch self {
        case .lanczos3:
            if x < 1e-9 { return 1 }
            if x >= 3 { return 0 }
            let px = Double.pi * x
            return 3 * sin(px) * sin(px / 3) / (px * px)
        case .mitchell:
            let b = 1.0 / 3, c = 1.0 / 3
            if x < 1 {
                return ((12 - 9 * b - 6 * c) * x * x * x + (-18 + 12 * b + 6 * c) * x * x + (6 - 2 * b)) / 6
            } else if x < 2 {
                return ((-b - 6 * c) * x * x * x + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6
            }
            return 0
        }
    }
}

/// For each output sample along one axis: the first source sample and the weights of a
/// contiguous run of source samples (edges clamped, weights normalised to sum 1).
struct FilterTable: Sendable {
    var starts: [Int]
    var offsets: [Int]
    var counts: [Int]
    var weights: [Float]

    init(sourceLength: Int, outputLength: Int, kernel: ResamplingKernel) {
        let scale = Double(outputLength) / Double(sourceLength)
        let stretch = max(1 / scale, 1)  // widen the kernel when shrinking
        let support = kernel.support * stretch
        starts = []
        offsets = []
        counts = []
        weights = []
        starts.reserveCapacity(outputLength)
        for x in 0..<outputLength {
            let center = (Double(x) + 0.5) / scale - 0.5
            let left = Int((center - support).rounded(.up))
            let right = Int((center + support).rounded(.down))
            let first = max(0, min(left, sourceLength - 1))
            let last = max(0, min(right, sourceLength - 1))
            var taps = [Double](repeating: 0, count: last - first + 1)
            var sum = 0.0
            for i in left...max(left, right) {
                let w = kernel.weight((Double(i) - center) / stretch)
                taps[max(0, min(i, sourceLength - 1)) - first] += w
                sum += w
            }
            if sum == 0 { sum = 1 }
            // Drop negligible weights (sin(kπ) is not exactly 0 in floating point): at 1:1 the
            // kernel then is exactly one tap of weight 1, instead of tiny residues whose products
            // give transparent pixels an alpha of 1e-33 and, unpremultiplied, an invented colour.
            let largest = taps.map(abs).max() ?? 0
            var lo = 0, hi = taps.count - 1
            for i in taps.indices where abs(taps[i]) < largest * 1e-6 { taps[i] = 0 }
            while lo < hi && taps[lo] == 0 { lo += 1 }
            while hi > lo && taps[hi] == 0 { hi -= 1 }
            sum = taps[lo...hi].reduce(0, +)
            if sum == 0 { sum = 1 }
            starts.append(first + lo)
            offsets.append(weights.count)
            counts.append(hi - lo + 1)
            weights.append(contentsOf: taps[lo...hi].map { Float($0 / sum) })
        }
    }
}

extension FilterTable {
    private struct Key: Hashable {
        var sourceLength: Int
        var outputLength: Int
        var kernel: ResamplingKernel
    }

    /// The last tables made, at most 64: a warm makes the same few again and again (every text
    /// page is the same size), and each one's weights take a `sin` per tap (IMAGING.md, "Downscaler").
    private static let recent = Mutex<[Key: FilterTable]>([:])

    /// The table for these lengths, made once while it is among the recent ones.
    static func cached(sourceLength: Int, outputLength: Int, kernel: ResamplingKernel) -> FilterTable {
        let key = Key(sourceLength: sourceLength, outputLength: outputLength, kernel: kernel)
        if let table = recent.withLock({ $0[key] }) { return table }
        let table = FilterTable(sourceLength: sourceLength, outputLength: outputLength, kernel: kernel)
        recent.withLock { tables in
            if tables.count >= 64 { tables.removeAll(keepingCapacity: true) }
            tables[key] = table
        }
        return table
    }
}
