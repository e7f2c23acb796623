import ThumbcacheSync
import ThumbcacheLMDB

#if canImport(Glibc)
import Glibc
#endif

/// What a physical compaction did.
public struct CompactionReport: Sendable, Hashable, Codable {
    /// Size of `data.mdb` before and after.
    public var fileSizeBefore: Int
    public var fileSizeAfter: Int
    /// The generation now in use.
    public var generation: Int
    public var seconds: Double
}

extension ThumbnailStore {
    /// Rewrites the environment compactly (LMDB never shrinks its file) and switches every
    /// process over to it, safely while they read and write:
    ///
    /// 1. one compactor at a time (`flock` on `compact.lock`; a second one gets ``StoreError/Reason/busy``);
    /// 2. a write transaction is held on the current generation, so no commit can land after the
    ///    snapshot, while `mdb_env_copy2(MDB_CP_COMPACT)` writes generation N+1 (the compacting copy
    ///    reads through its own read-only transaction);
    /// 3. the copy is flushed, then `current` is switched atomically and the directory flushed;
    /// 4. the old generation's files are unlinked (processes that have them mapped keep reading a
    ///    consistent snapshot until they notice, within 100 ms; writers notice at once, under
    ///    the writer lock, and retry in the new generation).
    ///
    /// Killed before step 3, the old generation stays in use and the partial copy is removed next
    /// time; killed after it, the new generation is complete.
    public func compactFile() throws(StoreError) -> CompactionReport {
        let start = MonotonicClock.nanoseconds()
        let fd = Glibc.open(directory + "/" + Generation.lockFile, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system("open \(Generation.lockFile)", path: directory) }
        defer { close(fd) }  // releases the flock
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw StoreError(path: directory, reason: .busy) }

        let h = try refreshIfSwitched()
        let before = Self.fileSize(h.environment.directory)
        let next = h.generation + 1
        let target = Generation.path(next, in: directory)
        Generation.removeTree(target)  // what a killed compaction left
        guard mkdir(target, 0o700) == 0 else {
            throw .system("create generation directory \(target)", path: directory)
        }
        do {
            try h.environment.write { txn in
                guard Generation.current(in: directory) == h.generation else { throw StaleGeneration() }
                try h.environment.copyCompacted(to: target)
                Generation.syncFile(target + "/data.mdb")
                Generation.syncDirectory(target)
                try Generation.switchTo(next, in: directory)
            }
        } catch {
            throw .wrapping(error, path: directory, operation: "compact into \(target)")
        }
        // The old generation and any leftovers: unlinked, while mapped ones live on.
        if h.generation == 0 {
            unlink(directory + "/data.mdb")
            unlink(directory + "/lock.mdb")
        }
        for old in Generation.others(than: next, in: directory) { Generation.removeTree(Generation.path(old, in: directory)) }
        let fresh = try refresh(from: h.generation)
        return CompactionReport(fileSizeBefore: before, fileSizeAfter: Self.fileSize(fresh.environment.directory), generation: next,
                                seconds: Double(MonotonicClock.nanoseconds() - start) / 1e9)
    }

    /// The current handles, reopened first if a compaction switched generations.
    private func refreshIfSwitched() throws(StoreError) -> Handles {
        let h = handles(forceCheck: true)
        guard Generation.current(in: directory) != h.generation else { return h }
        return try refresh(from: h.generation)
    }

    static func fileSize(_ environmentDirectory: String) -> Int {
        var s = stat()
        return stat(environmentDirectory + "/data.mdb", &s) == 0 ? Int(s.st_size) : 0
    }
}
