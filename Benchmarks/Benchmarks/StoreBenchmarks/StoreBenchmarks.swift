// Store benchmarks (issue: content-addressed thumbnail store).
//
//   cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --target StoreBenchmarks
//
// Comparisons run in the same process and the same run: open+read+close of the same 50 KB files
// beside the cache-hit lookup, and `xxhsum` on the same page-cached 1 GiB file beside our hasher.
import Benchmark
import Foundation
import ThumbcacheStore

#if canImport(Glibc)
import Glibc
#endif

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput], warmupIterations: 3, maxDuration: .seconds(5), maxIterations: 100_000)

    // MARK: Cache hit

    // One lookup per scaled iteration; the table shows time per lookup.
    let perLookup = Benchmark.Configuration(
        metrics: [.wallClock, .throughput], timeUnits: .nanoseconds, warmupIterations: 10, scalingFactor: .kilo,
        maxDuration: .seconds(4), maxIterations: 2_000)

    Benchmark("Cache hit: stat + stat cache + thumbnail view", configuration: perLookup) { benchmark in
        let f = HitFixture.shared
        var bytes = 0
        for i in benchmark.scaledIterations {
            let path = f.paths[i % f.paths.count]
            guard let snapshot = try? FileSnapshot.of(path: path) else { fatalError("stat failed: \(path)") }
            let n = try? f.store.withCachedThumbnail(
                path: path, snapshot: snapshot, boxWidth: 256, boxHeight: 256, variant: HitFixture.variant
            ) { _, view in view.data.count }
            guard let n = n ?? nil else { fatalError("cache miss on \(path)") }
            bytes &+= n
        }
        blackHole(bytes)
    }

    // The same lookup when the caller already has a fresh stat (a directory walk, inotify).
    Benchmark("Cache hit given a stat: stat cache + thumbnail view", configuration: perLookup) { benchmark in
        let f = HitFixture.shared
        var bytes = 0
        for i in benchmark.scaledIterations {
            let n = try? f.store.withCachedThumbnail(
                path: f.paths[i % f.paths.count], snapshot: f.snapshots[i % f.paths.count], boxWidth: 256, boxHeight: 256,
                variant: HitFixture.variant
            ) { _, view in view.data.count }
            guard let n = n ?? nil else { fatalError("cache miss") }
            bytes &+= n
        }
        blackHole(bytes)
    }

    Benchmark("Baseline: stat alone", configuration: perLookup) { benchmark in
        let f = HitFixture.shared
        var size: UInt64 = 0
        for i in benchmark.scaledIterations {
            size &+= (try? FileSnapshot.of(path: f.paths[i % f.paths.count]))?.size ?? 0
        }
        blackHole(size)
    }

    Benchmark("Baseline: open + read + close of the 50 KB file", configuration: perLookup) { benchmark in
        let f = HitFixture.shared
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 << 10, alignment: 64)
        defer { buffer.deallocate() }
        var bytes = 0
        for i in benchmark.scaledIterations {
            let fd = open(f.paths[i % f.paths.count], O_RDONLY | O_CLOEXEC)
            while case let n = read(fd, buffer, 64 << 10), n > 0 { bytes &+= n }
            close(fd)
        }
        blackHole(bytes)
    }

    // MARK: Hashing

    let hashing = Benchmark.Configuration(
        metrics: [.wallClock], timeUnits: .milliseconds, warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 15)

    Benchmark("Hash 1 GiB file: ContentHasher (XXH3-128)", configuration: hashing) { benchmark in
        let path = HashFixture.shared.path
        let hasher = ContentHasher()
        for _ in benchmark.scaledIterations {
            blackHole(try! hasher.hash(fileAt: path).hash)
        }
    }

    for variant in ["-H3", "-H2"] {
        Benchmark("Hash 1 GiB file: xxhsum \(variant) (process)", configuration: hashing) { benchmark in
            let path = HashFixture.shared.path
            for _ in benchmark.scaledIterations {
                runQuietly(["/usr/bin/xxhsum", variant, path])
            }
        }
    }

    // MARK: Group commit

    // Wall clock per 1000 records: 50 ms here is 20 000 records/s.
    let inserts = Benchmark.Configuration(
        metrics: [.wallClock], timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 12)

    // Deferred durability: measured until the last record is committed (visible to every
    // reader, safe from any process crash); the flush to disk happens after, unmeasured.
    Benchmark("Group commit: 1000 × 50 KB records, committed (deferred sync)", configuration: inserts) { benchmark in
        let fixture = InsertFixture(durability: .deferred)
        let writer = GroupCommitWriter(store: fixture.store)
        let counter = CompletionCounter(target: 1000)
        benchmark.startMeasurement()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            counter.onDone = { done.resume() }
            for i in 0..<1000 {
                writer.enqueue(fixture.write(i)) { result in
                    precondition((try? result.get()) != nil, "write failed")
                    counter.increment()
                }
            }
        }
        benchmark.stopMeasurement()
        await writer.flush()
        writer.close()
        fixture.remove(after: writer)
    }

    // Every commit flushed to disk before the next: durable against power loss.
    Benchmark("Group commit: 1000 × 50 KB records, durable (sync every commit)", configuration: inserts) { benchmark in
        let fixture = InsertFixture(durability: .everyCommit)
        let writer = GroupCommitWriter(store: fixture.store)
        benchmark.startMeasurement()
        for i in 0..<1000 {
            try await writer.enqueue(fixture.write(i))
        }
        let failures = await writer.flush()
        benchmark.stopMeasurement()
        precondition(failures.isEmpty, "\(failures)")
        writer.close()
        fixture.remove(after: writer)
    }

    // MARK: Maintenance

    let maintenance = Benchmark.Configuration(
        metrics: [.wallClock], timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(20), maxIterations: 5)

    // 10 000 thumbnails of 20 KB (200 MB); evict the least recently used 10 %.
    Benchmark("Evict 10 % of 10 000 × 20 KB thumbnails (LRU scan, sort, delete)", configuration: maintenance) { benchmark in
        let fixture = EvictionFixture(count: 10_000)
        let budget = try fixture.store.thumbnailBytes() * 9 / 10
        benchmark.startMeasurement()
        let report = try fixture.store.evict(toFit: budget)
        benchmark.stopMeasurement()
        precondition(report.evictedThumbnails >= 1000 && report.evictedThumbnails <= 1001, "\(report)")
        fixture.remove()
    }

    Benchmark("Eviction check when 10 000 × 20 KB thumbnails fit (scan only)", configuration: maintenance) { benchmark in
        let fixture = EvictionFixture(count: 10_000)
        benchmark.startMeasurement()
        let report = try fixture.store.evict(toFit: Int.max)
        benchmark.stopMeasurement()
        precondition(report.evictedThumbnails == 0)
        fixture.remove()
    }

    // A ~1 GB cache (20 000 × 50 KB), half of it evicted, rewritten compactly.
    Benchmark(
        "Compact a 1 GB cache with 50 % free (20 000 × 50 KB; rewrite, fsync, switch)",
        configuration: .init(metrics: [.wallClock], timeUnits: .milliseconds, warmupIterations: 0, maxDuration: .seconds(60), maxIterations: 3)
    ) { benchmark in
        let fixture = EvictionFixture(count: 20_000, size: 50_000)
        _ = try fixture.store.evict(toFit: try fixture.store.thumbnailBytes() / 2)
        try fixture.store.sync()
        benchmark.startMeasurement()
        let report = try fixture.store.compactFile()
        benchmark.stopMeasurement()
        print("compaction: \(report.fileSizeBefore) -> \(report.fileSizeAfter) bytes in \(report.seconds) s")
        fixture.remove()
    }

    // The same records straight into LMDB from one thread, no writer: the floor to compare with.
    Benchmark("Group commit baseline: 1000 × 50 KB, plain LMDB loop, 167 per transaction", configuration: inserts) { benchmark in
        let fixture = InsertFixture(durability: .deferred)
        let writes = (0..<1000).map { fixture.write($0) }
        benchmark.startMeasurement()
        for chunk in stride(from: 0, to: 1000, by: 167) {
            try fixture.store.apply(writes[chunk..<min(chunk + 167, 1000)].flatMap { $0 })
        }
        benchmark.stopMeasurement()
        fixture.remove(after: nil)
    }
}

/// 1000 files of 50 KB, each recorded in the stat cache with a 20 KB thumbnail.
final class HitFixture: Sendable {
    static let shared = HitFixture()
    static let variant = ThumbnailVariant(generatorVersion: 1)
    let directory = makeTemporaryDirectory("hit")
    let store: ThumbnailStore
    let paths: [String]
    let snapshots: [FileSnapshot]

    init() {
        store = try! ThumbnailStore.open(directory: directory + "/cache")
        var paths: [String] = []
        var snapshots: [FileSnapshot] = []
        var writes: [StoreWrite] = []
        let hasher = ContentHasher()
        let thumb = pseudoRandomBytes(20_000, seed: 99)
        for i in 0..<1000 {
            let path = directory + "/file-\(i).jpg"
            writeFile(path, pseudoRandomBytes(50_000, seed: UInt64(i + 1)))
            let (hash, snapshot) = try! hasher.hash(fileAt: path)
            writes.append(.file(path: path, snapshot: snapshot, content: hash, now: snapshot.changeTime + 10_000_000_000))
            let header = ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: false, pixelWidth: 256, pixelHeight: 192,
                                         scale: 1, created: 0, sourceContentType: "public.jpeg")
            writes.append(.thumbnail(ThumbnailKey(content: hash, boxWidth: 256, boxHeight: 256, variant: Self.variant), header, data: thumb))
            paths.append(path)
            snapshots.append(snapshot)
        }
        try! store.apply(writes)
        self.paths = paths
        self.snapshots = snapshots
    }
}

/// A 1 GiB file of pseudo-random bytes, read once so that it sits in the page cache.
final class HashFixture: Sendable {
    static let shared = HashFixture()
    let path = makeTemporaryDirectory("hash") + "/1GiB.bin"

    init() {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let chunk = pseudoRandomBytes(8 << 20, seed: 7)
        for _ in 0..<128 { _ = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        close(fd)
        _ = try! ContentHasher().hash(fileAt: path)
    }
}

/// A fresh store; `write(i)` is the i-th 50 KB record (same bytes, a new key each time).
struct InsertFixture {
    static let payload = pseudoRandomBytes(50_000, seed: 3)
    static let header = ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: false, pixelWidth: 256, pixelHeight: 192,
                                        scale: 1, created: 0, sourceContentType: "public.jpeg")
    let store: ThumbnailStore
    let directory = makeTemporaryDirectory("insert")

    init(durability: ThumbnailStore.Durability) {
        store = try! ThumbnailStore.open(directory: directory + "/cache", options: .init(mapSize: 1 << 30, durability: durability))
    }

    /// Deletes the cache, so that its pages leave the page cache instead of piling up as dirty
    /// memory until the kernel throttles every writer to the disk's speed.
    func remove(after writer: GroupCommitWriter?) {
        _ = writer
        try? FileManager.default.removeItem(atPath: directory)
    }

    func write(_ i: Int) -> [StoreWrite] {
        let key = ThumbnailKey(content: ContentHash(high: UInt64(i), low: 0), boxWidth: 256, boxHeight: 256,
                               variant: ThumbnailVariant(generatorVersion: 1))
        return [.thumbnail(key, Self.header, data: Self.payload)]
    }
}

/// Counts completions from the writer thread and calls `onDone` at the target.
final class CompletionCounter: @unchecked Sendable {
    // @unchecked Sendable: `count` and `onDone` are guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    private let target: Int
    var onDone: (() -> Void)? {
        get { lock.withLock { _onDone } }
        set { lock.withLock { _onDone = newValue } }
    }
    private var _onDone: (() -> Void)?

    init(target: Int) { self.target = target }

    func increment() {
        let done: (() -> Void)? = lock.withLock {
            count += 1
            return count == target ? _onDone : nil
        }
        done?()
    }
}

/// A cache of `count` 20 KB thumbnails with distinct creation minutes and some access stamps.
struct EvictionFixture {
    let directory = makeTemporaryDirectory("evict")
    let store: ThumbnailStore

    init(count: Int, size: Int = 20_000) {
        store = try! ThumbnailStore.open(directory: directory + "/cache", options: .init(mapSize: 1 << 30, durability: .deferred))
        let payload = pseudoRandomBytes(size, seed: 5)
        var writes: [StoreWrite] = []
        for i in 0..<count {
            let key = ThumbnailKey(content: ContentHash(high: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, low: UInt64(i)), boxWidth: 256,
                                   boxHeight: 256, variant: ThumbnailVariant(generatorVersion: 1))
            let header = ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: false, pixelWidth: 256, pixelHeight: 192,
                                         scale: 1, created: Int64(i) * 60_000_000_000, sourceContentType: "public.jpeg")
            writes.append(.thumbnail(key, header, data: payload))
            if i % 7 == 0 { writes.append(.accessed(key, minute: UInt32(count + i))) }
            if writes.count >= 200 {
                try! store.apply(writes)
                writes = []
            }
        }
        try! store.apply(writes)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

func makeTemporaryDirectory(_ name: String) -> String {
    var template = Array("/tmp/thumbcache-bench-\(name)-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}

func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

func pseudoRandomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        for i in 0..<count {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            buffer[i] = UInt8(truncatingIfNeeded: x)
        }
        initialized = count
    }
}

/// Runs a program with its output discarded and waits for it.
func runQuietly(_ argv: [String]) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let args = argv.map { strdup($0) } + [nil]
    var pid: pid_t = 0
    precondition(posix_spawn(&pid, argv[0], &actions, nil, args, environ) == 0, "cannot run \(argv[0])")
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    args.forEach { free($0) }
    posix_spawn_file_actions_destroy(&actions)
}
