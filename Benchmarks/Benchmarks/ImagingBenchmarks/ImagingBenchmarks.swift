// Imaging benchmarks (issue: imaging core).
//
//   cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --target ImagingBenchmarks
//
// The per-image comparison with vipsthumbnail runs as processes in Tools/compare-imaging, so both
// tools pay the same start-up; these measure the kernels and the in-process pipeline.
import Benchmark
import Foundation
import ThumbcacheImaging

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock], warmupIterations: 3, maxDuration: .seconds(5), maxIterations: 10_000)

    // 2 × 4000 px RGBA source rows = 32 000 bytes per call, in L1/L2: 1000 calls per iteration.
    Benchmark(
        "Box 2×2 reduce: 1000 × two 4000-px rows in cache (32 MB of source)",
        configuration: .init(metrics: [.wallClock], timeUnits: .microseconds, warmupIterations: 5, maxIterations: 2000)
    ) { benchmark in
        let top = [UInt8](repeating: 0, count: 4000 * 4).enumerated().map { UInt8(truncatingIfNeeded: $0.offset &* 7) }
        let bottom = top.reversed() as [UInt8]
        var out = [UInt8](repeating: 0, count: 2000 * 4)
        benchmark.startMeasurement()
        top.withUnsafeBufferPointer { t in
            bottom.withUnsafeBufferPointer { b in
                out.withUnsafeMutableBufferPointer { o in
                    for _ in 0..<1000 { boxReduce2x2(top: t.baseAddress!, bottom: b.baseAddress!, into: o.baseAddress!, pixels: 2000) }
                }
            }
        }
        benchmark.stopMeasurement()
        blackHole(out)
    }

    Benchmark(
        "Downscale RGBA8 4000×3000 → 256×192, streaming through Thumbnailer.resize (12 Mpix per iteration)",
        configuration: .init(metrics: [.wallClock], timeUnits: .milliseconds, warmupIterations: 2, maxIterations: 50)
    ) { benchmark in
        let source = SourceImage.shared
        let image = RGBAImage(width: 4000, height: 3000, pixels: source.pixels, hasAlpha: false)
        blackHole(Thumbnailer.resize(image, options: ThumbnailOptions(maxWidth: 256, maxHeight: 192)))
    }

    for (name, file) in [("JPEG 12 MP", "large/derived-storm-12mp.jpg"), ("PNG 18 MP", "large/derived-elephants-18mp.png"),
                         ("JPEG 48 MP", "large/derived-wood-48mp.jpg")] {
        let path = (ProcessInfo.processInfo.environment["THUMBCACHE_CORPUS"] ?? "/tmp/thumbcorpus") + "/" + file
        guard FileManager.default.fileExists(atPath: path) else { continue }
        Benchmark(
            "Thumbnail \(name) → 256 px PNG, in process",
            configuration: .init(metrics: [.wallClock, .peakMemoryResident], timeUnits: .milliseconds, warmupIterations: 1, maxIterations: 30)
        ) { benchmark in
            let (image, _) = try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 256, maxHeight: 256))
            blackHole(try ImageEncoder.png(image))
        }
    }
}

final class SourceImage: Sendable {
    static let shared = SourceImage()
    let pixels: [UInt8]
    init() {
        var p = [UInt8](repeating: 0, count: 4000 * 3000 * 4)
        for i in stride(from: 0, to: p.count, by: 4) {
            p[i] = UInt8(truncatingIfNeeded: i >> 4)
            p[i + 1] = UInt8(truncatingIfNeeded: i >> 9)
            p[i + 2] = UInt8(truncatingIfNeeded: i &* 3)
            p[i + 3] = 255
        }
        pixels = p
    }
}
