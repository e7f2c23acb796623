import Foundation
import Testing
import ThumbcacheTestSupport

/// Docs/LICENSES.md: what only the worker executables may link (libseccomp, every format decoder
/// beyond PNG and JPEG, among them libheif with GPL x265) never reaches a library product an app embeds.
struct LicenceBoundaryTests {
    /// Targets that link what must stay out of the library products.
    static let workerOnly: Set<String> = ["CThumbcacheSandbox", "ThumbcacheSandbox", "ThumbcacheCodecSupport", "ThumbcacheCodecs", "ThumbcacheDocumentCodecs",
                                                 "ThumbcacheMediaCodecs", "ThumbcacheVectorCodecs", "ThumbcacheHeavyCodecs", "CThumbcacheWebP", "CThumbcacheGIF", "CThumbcacheTIFF", "CThumbcacheHEIF", "CThumbcacheDe265", "CThumbcacheDav1d", "CThumbcacheAVCodec", "CThumbcacheSVG", "CThumbcacheRSVG", "CThumbcacheRaw", "CThumbcacheJXL", "CThumbcacheVideo", "CThumbcachePDF", "CPoppler", "CThumbcacheText", "CThumbcacheArchive"]

    struct Manifest: Decodable {
        struct Product: Decodable {
            var name: String
            var targets: [String]
            var type: [String: AnyCodable]
        }
        struct Target: Decodable {
            var name: String
            var dependencies: [[String: [String?]]]
        }
        var products: [Product]
        var targets: [Target]
    }

    /// Decodes any JSON value and keeps nothing.
    struct AnyCodable: Decodable {
        init(from decoder: any Decoder) throws {}
    }

    @Test func theLibraryProductsNeverReachWorkerOnlyTargets() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scratch = TemporaryDirectory()
        let child = try ChildProcess(program: "/usr/bin/env",
                                     arguments: ["swift", "package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package"])
        let (end, stderr) = child.wait(timeout: 300)
        try #require(end == .exited(0), "swift package dump-package failed: \(stderr)")
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(child.output.joined(separator: "\n").utf8))
        let dependencies = Dictionary(uniqueKeysWithValues: manifest.targets.map { target in
            (target.name, target.dependencies.flatMap { $0.values.compactMap { $0.first ?? nil } })
        })
        func closure(_ start: [String]) -> Set<String> {
            var seen = Set<String>(), queue = start
            while let next = queue.popLast() {
                if seen.insert(next).inserted { queue += dependencies[next] ?? [] }
            }
            return seen
        }
        let libraries = manifest.products.filter { $0.type["library"] != nil }
        #expect(Set(libraries.map(\.name)).isSuperset(of: ["Thumbcache", "ThumbcacheStore", "ThumbcacheImaging", "ThumbcacheIndex"]))
        for product in libraries {
            let reached = closure(product.targets).intersection(Self.workerOnly)
            #expect(reached.isEmpty, "library product \(product.name) links \(reached.sorted())")
        }
        // Each family's worker links its own decoders and no other family's libraries: loading
        // them is most of a worker's start.
        let families: [(worker: String, own: Set<String>)] = [("thumbcache-worker", ["ThumbcacheCodecs", "CThumbcacheDe265", "CThumbcacheRaw"]),
                                                              ("thumbcache-worker-vector", ["ThumbcacheVectorCodecs", "CThumbcacheSVG"]),
                                                              ("thumbcache-worker-heavy", ["ThumbcacheHeavyCodecs", "CThumbcacheHEIF", "CThumbcacheJXL"]),
                                                              ("thumbcache-worker-documents", ["ThumbcacheDocumentCodecs", "CThumbcachePDF", "CThumbcacheText"]),
                                                              ("thumbcache-worker-media", ["ThumbcacheMediaCodecs", "CThumbcacheVideo"])]
        // But the image worker's program, which is also the plug-in's, forks documents workers: it
        // links their decoders, whose libraries load at a first file (LibrariesLoadedLaterTests).
        let forked = ["thumbcache-worker": families.first { $0.worker == "thumbcache-worker-documents" }!.own]
        for (worker, own) in families {
            let linked = closure([worker])
            #expect(linked.isSuperset(of: own.union(["CThumbcacheSandbox"])), "\(worker) lacks \(own.subtracting(linked).sorted())")
            let others = families.filter { $0.worker != worker }.reduce(Set<String>()) { $0.union($1.own) }.subtracting(forked[worker] ?? [])
            #expect(linked.isDisjoint(with: others), "\(worker) links \(linked.intersection(others).sorted())")
        }
        // The command-line tool starts the workers; depending on one would link its code and
        // libraries into the tool. It forks a one-file call's documents worker, so it links that
        // family's decoders (whose libraries load in the child) and the confinement, nothing else.
        let documents = families.first { $0.worker == "thumbcache-worker-documents" }!.own
        let cli = closure(["thumbcache"]).intersection(Self.workerOnly.union(families.map(\.worker)))
        #expect(cli.isSuperset(of: documents), "the thumbcache tool lacks \(documents.subtracting(cli).sorted())")
        let beyond = cli.subtracting(closure(["ThumbcacheDocumentCodecs", "ThumbcacheSandbox"]))
        #expect(beyond.isEmpty, "the thumbcache tool links \(beyond.sorted())")
    }
}
