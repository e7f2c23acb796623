// swift-tools-version: 6.1
// libFuzzer harnesses, in their own package so that a normal build never needs the fuzzer
// runtime. Run one with Tools/fuzz TARGET [SECONDS] (it builds with -sanitize=fuzzer,address).
import PackageDescription

// The root package's identity is its folder's name, which differs between checkouts.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "thumbcache"

// Each harness defines LLVMFuzzerTestOneInput; libFuzzer provides main.
func harness(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport"] + products.map { .product(name: $0, package: root) },
        path: "Sources/\(name)",
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    )
}

let package = Package(
    name: "thumbcache-fuzz",
    dependencies: [.package(path: "../")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "ThumbcacheImaging", package: root)]),
        harness("fuzz-png", ["ThumbcacheImaging"]),
        harness("fuzz-jpeg", ["ThumbcacheImaging"]),
        harness("fuzz-jpeg2", ["ThumbcacheImaging"]),
        harness("fuzz-exif", ["ThumbcacheImaging"]),
        harness("fuzz-simple", ["ThumbcacheImaging"]),
        harness("fuzz-heif", ["ThumbcacheImaging"]),
        harness("fuzz-sniff", ["Thumbcache"]),
        harness("fuzz-query", ["ThumbcacheIndex"]),
        harness("fuzz-text", ["ThumbcacheImaging"]),
        harness("fuzz-lzw", ["ThumbcacheImaging"]),
    ]
)
