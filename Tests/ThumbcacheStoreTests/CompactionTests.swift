import Foundation
import Testing
import ThumbcacheLMDB
import ThumbcacheStore
import ThumbcacheTestSupport

/// Physical compaction, in process and with real processes reading, writing and being killed.
@Suite(.serialized)
struct CompactionTests {
    /// Every record verifies; returns how many there are, by writer.
    static func verifiedCounts(in cache: String) throws -> [UInt64: Int] {
        let store = try ThumbnailStore.open(directory: cache)
        var counts: [UInt64: Int] = [:]
        try store.forEachThumbnail { key, view in
            #expect(ProbeRecords.verify(key: key, data: view.data), "record \(key) is damaged")
            counts[key.content.high, default: 0] += 1
            return true
        }
        return counts
    }

    /// A fresh process reads every record once; returns the count it saw.
    static func countInFreshProcess(_ cache: String) throws -> Int? {
        let reader = try ChildProcess(program: "thumbcache-probe", arguments: ["read", cache, "0"])
        let (end, stderr) = reader.wait()
        #expect(end == .exited(0), "reader: \(stderr)")
        return reader.output.last.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
    }

    static func prefill(_ cache: String, writer: Int, groups: Int, size: Int) throws {
        let child = try ChildProcess(program: "thumbcache-probe", arguments: ["write", cache, "\(writer)", "\(groups)", "2", "\(size)"])
        #expect(child.wait().termination == .exited(0))
    }

    @Test func compactionShrinksTheFileAndKeepsEveryRecord() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        try Self.prefill(cache, writer: 1, groups: 300, size: 50_000)
        let store = try ThumbnailStore.open(directory: cache)
        _ = try store.evict(toFit: try store.thumbnailBytes() / 4)
        let live = try store.thumbnailBytes()
        let report = try store.compactFile()
        #expect(report.generation == 1)
        #expect(report.fileSizeAfter < report.fileSizeBefore / 2)
        #expect(Double(report.fileSizeAfter) <= 1.2 * Double(live))
        #expect(try store.thumbnailBytes() == live)
        // Again: generation 2, the old one gone.
        #expect(try store.compactFile().generation == 2)
        #expect(!FileManager.default.fileExists(atPath: cache + "/gen-1"))
        #expect(!FileManager.default.fileExists(atPath: cache + "/data.mdb"))
        #expect(try Self.countInFreshProcess(cache) == (try Self.verifiedCounts(in: cache).values.reduce(0, +)))
    }

    @Test func aReaderKeepsReadingWhileAnotherProcessCompacts() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        try Self.prefill(cache, writer: 2, groups: 150, size: 20_000)
        let compactor = try ChildProcess(program: "thumbcache-probe", arguments: ["compact-loop", cache])
        let reader = try ChildProcess(program: "thumbcache-probe", arguments: ["read", cache, "3"])
        let (end, stderr) = reader.wait()
        compactor.kill(SIGKILL)
        _ = compactor.wait()
        #expect(end == .exited(0), "reader: \(stderr)")
        #expect(reader.output.last?.hasSuffix("records 300") == true)
        #expect(compactor.output.count >= 2, "compactions: \(compactor.output.count)")
    }

    @Test func writersLoseNothingWhileAnotherProcessCompacts() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        try Self.prefill(cache, writer: 3, groups: 50, size: 10_000)
        let compactor = try ChildProcess(program: "thumbcache-probe", arguments: ["compact-loop", cache])
        let writer = try ChildProcess(program: "thumbcache-probe", arguments: ["write", cache, "4", "800", "2", "8000"])
        let (end, stderr) = writer.wait()
        compactor.kill(SIGKILL)
        _ = compactor.wait()
        #expect(end == .exited(0), "writer: \(stderr)")
        #expect(compactor.output.count >= 1)
        let counts = try Self.verifiedCounts(in: cache)
        #expect(counts[3] == 100)
        #expect(counts[4] == 1600, "every committed group of the writer is there")
    }

    /// SIGKILL the compactor at 20 different moments: the cache opens afterwards in a fresh
    /// process and every record is there and decodes.
    @Test func killedCompactionsLeaveAUsableCache() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        try Self.prefill(cache, writer: 5, groups: 200, size: 20_000)
        var generator = SeededRandom.forTest()
        for round in 0..<20 {
            let compactor = try ChildProcess(program: "thumbcache-probe", arguments: ["compact-loop", cache])
            usleep(UInt32.random(in: 0..<150_000, using: &generator))
            compactor.kill(SIGKILL)
            _ = compactor.wait()
            #expect(try Self.countInFreshProcess(cache) == 400, "round \(round)")
        }
        #expect(try Self.verifiedCounts(in: cache) == [5: 400])
    }

    @Test func aSecondCompactorIsToldTheCacheIsBusy() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        try Self.prefill(cache, writer: 6, groups: 10, size: 1000)
        let lock = open(cache + "/compact.lock", O_CREAT | O_RDWR, 0o600)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX) == 0)
        let store = try ThumbnailStore.open(directory: cache)
        #expect(throws: StoreError.self) { try store.compactFile() }
    }
}

/// Errors name the file and the system's reason, not a database error they are not.
struct StoreErrorTests {
    @Test func anUnopenableLockFileIsNamedWithItsReason() throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        try FileManager.default.createDirectory(atPath: dir.appending("cache/compact.lock"), withIntermediateDirectories: false)
        do {
            _ = try store.compactFile()
            Issue.record("compacting with a directory for compact.lock should fail")
        } catch {
            #expect(error.description.contains("open compact.lock failed: Is a directory"), "\(error)")
            #expect(!error.description.contains("LMDB"), "\(error)")
        }
    }

    /// A cache is found where it is, before and after a compaction moved it into a generation.
    @Test func aCacheIsFoundInItsCurrentGeneration() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        #expect(!ThumbnailStore.exists(directory: cache))
        let store = try ThumbnailStore.open(directory: cache)
        #expect(ThumbnailStore.exists(directory: cache))
        _ = try store.compactFile()
        #expect(!FileManager.default.fileExists(atPath: cache + "/data.mdb"), "moved into a generation")
        #expect(ThumbnailStore.exists(directory: cache))
    }
}

