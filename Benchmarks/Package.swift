// swift-tools-version: 6.1
// Benchmarks live in their own package so that the library and a cold `swift test` stay lean.
// Run: cd Benchmarks && swift package --allow-writing-to-package-directory benchmark
import PackageDescription

// The root package's identity is its folder's name, which differs between checkouts.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "thumbcache"

let package = Package(
    name: "thumbcache-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The deterministic items and queries of the index benchmarks (also loaded into SQLite).
        .target(name: "IndexCorpus", dependencies: [.product(name: "ThumbcacheIndex", package: root)]),
        .executableTarget(name: "index-compare", dependencies: ["IndexCorpus", .product(name: "ThumbcacheIndex", package: root)]),
        .executableTarget(
            name: "IndexBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "IndexCorpus",
                .product(name: "ThumbcacheIndex", package: root),
            ],
            path: "Benchmarks/IndexBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ThumbcacheStore", package: root),
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ImagingBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ThumbcacheImaging", package: root),
            ],
            path: "Benchmarks/ImagingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
