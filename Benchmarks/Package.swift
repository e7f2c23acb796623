// swift-tools-version: 6.1
// Benchmarks live in their own package so that the library and a cold `swift test` stay lean.
// Run: cd Benchmarks && swift package --allow-writing-to-package-directory benchmark
import PackageDescription

// What the benchmarks measure (the store's writes and keys, the hasher, the resize kernels, file
// indexing) is the engine's package API, which an app never sees. Swift's `package` access
// reaches only modules of one package, so this package compiles those core modules itself, from
// the root's sources through the link `Engine` (-> ../Sources), with the same dependencies as the
// root's Package.swift gives them; it does not depend on the root package.
func core(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .target(name: name, dependencies: dependencies, path: "Engine/Core/\(name)", exclude: ["\(name).docc"])
}

let package = Package(
    name: "thumbcache-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .systemLibrary(name: "CThumbcacheLMDB", path: "Engine/C/CThumbcacheLMDB", pkgConfig: "lmdb"),
        .target(name: "CThumbcacheXXHash", path: "Engine/C/CThumbcacheXXHash"),
        .target(name: "CThumbcachePNG", path: "Engine/C/CThumbcachePNG", linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("isal"), .linkedLibrary("z")]),
        .target(name: "CThumbcacheWords", path: "Engine/C/CThumbcacheWords", linkerSettings: [.linkedLibrary("icuuc")]),
        .systemLibrary(name: "CThumbcacheZstd", path: "Engine/C/CThumbcacheZstd", pkgConfig: "libzstd"),
        .target(name: "CThumbcacheJPEG", path: "Engine/C/CThumbcacheJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "ThumbcacheSync", dependencies: [.product(name: "SystemPackage", package: "swift-system")], path: "Engine/Core/ThumbcacheSync"),
        .target(name: "ThumbcacheLMDB", dependencies: ["CThumbcacheLMDB"], path: "Engine/Core/ThumbcacheLMDB"),
        core("ThumbcacheStore", ["ThumbcacheLMDB", "CThumbcacheXXHash", "ThumbcacheSync"]),
        core("ThumbcacheIndex", ["ThumbcacheLMDB", "ThumbcacheSync", "CThumbcacheXXHash", "CThumbcacheWords", "CThumbcacheZstd"]),
        core("ThumbcacheImaging", ["CThumbcachePNG", "CThumbcacheJPEG", "ThumbcacheSync"]),

        // The deterministic items and queries of the index benchmarks (also loaded into SQLite).
        .target(name: "IndexCorpus", dependencies: ["ThumbcacheIndex"]),
        .executableTarget(name: "index-compare", dependencies: ["IndexCorpus", "ThumbcacheIndex"]),
        // The full-text index on extracted texts, beside SQLite FTS5 and Xapian (Tools/compare-fulltext).
        .executableTarget(name: "fulltext-compare", dependencies: ["ThumbcacheIndex"]),
        .executableTarget(
            name: "IndexBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "IndexCorpus",
                "ThumbcacheIndex",
            ],
            path: "Benchmarks/IndexBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "ThumbcacheStore",
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ImagingBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "ThumbcacheImaging",
            ],
            path: "Benchmarks/ImagingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
