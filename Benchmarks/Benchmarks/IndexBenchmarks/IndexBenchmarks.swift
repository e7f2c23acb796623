import Benchmark
import Foundation
import IndexCorpus
import ThumbcacheIndex

// The metadata index on IndexCorpus items: bulk ingest and the four query classes of issue 5.
// Tools/compare-index measures the same against SQLite in one run.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput], maxDuration: .seconds(10), maxIterations: 200)
    let count = ProcessInfo.processInfo.environment["INDEX_BENCH_ITEMS"].flatMap(Int.init) ?? IndexCorpus.million
    let directory = NSTemporaryDirectory() + "thumbcache-bench-index-\(getpid())"

    // One iteration = every item indexed into a fresh index, 50 000 per transaction.
    Benchmark("Index: bulk ingest \(count) items", configuration: .init(metrics: [.wallClock], maxIterations: 1)) { benchmark in
        let dir = directory + "-ingest"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let index = try MetadataIndex.open(directory: dir, durability: .deferred)
        var start = 0
        while start < count {
            let items = (start..<min(count, start + 50_000)).map(IndexCorpus.item)
            benchmark.startMeasurement()
            _ = try index.indexFiles(items)
            benchmark.stopMeasurement()
            start += 50_000
        }
        try index.sync()
    }

    nonisolated(unsafe) var shared: MetadataIndex?
    func prepared() throws -> MetadataIndex {
        if let shared { return shared }
        try? FileManager.default.removeItem(atPath: directory)
        let index = try MetadataIndex.open(directory: directory, durability: .deferred)
        var start = 0
        while start < count {
            _ = try index.indexFiles((start..<min(count, start + 50_000)).map(IndexCorpus.item))
            start += 50_000
        }
        try index.sync()
        shared = index
        return index
    }

    for (name, query, _) in IndexCorpus.queries {
        Benchmark("Index: query \(name)") { benchmark in
            let index = try prepared()
            let parser = QueryParser()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try index.matchingItemNumbers(try parser.parse(query)).count)
            }
        }
    }
    Benchmark.teardown = { try? FileManager.default.removeItem(atPath: directory) }
}
