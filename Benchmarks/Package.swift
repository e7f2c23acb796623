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
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ThumbcacheStore", package: root),
                .product(name: "ThumbcacheLMDB", package: root),
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
