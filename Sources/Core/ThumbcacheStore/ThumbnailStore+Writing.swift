import Synchronization
import ThumbcacheSync
import ThumbcacheLMDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes: batches of ``StoreWrite``s in one transaction of the current generation.
extension ThumbnailStore {
    /// Applies `writes` in one transaction: all of them or, if it throws, none.
    package func apply(_ writes: [StoreWrite]) throws(StoreError) {
        try writing("commit \(writes.count) writes") { h, txn in
            for write in writes { try apply(write, handles: h, in: txn) }
        }
    }

    /// Runs `body` in a write transaction of the current generation. After LMDB's writer lock is
    /// taken, the generation is compared with the directory's: if a compaction switched it, the
    /// transaction is abandoned, the store reopens, and `body` runs again there, so no commit
    /// lands in a generation nobody reads any more.
    func writing<R>(_ operation: String, _ body: (Handles, borrowing Transaction) throws -> R) throws(StoreError) -> R {
        do {
            while true {
                let h = handles()
                do {
                    return try h.environment.write { txn in
                        guard Generation.current(in: directory) == h.generation else { throw StaleGeneration() }
                        return try body(h, txn)
                    }
                } catch is StaleGeneration {
                    try refresh(from: h.generation)
                }
            }
        } catch {
            throw .wrapping(error, path: directory, operation: operation)
        }
    }

    func apply(_ write: StoreWrite, handles h: Handles, in txn: borrowing Transaction) throws {
        switch write {
        case .file(let path, let entry):
            try withFileKey(path) { key, longPath in
                try entry.encoded(longPath: longPath.map { Array($0) }).withUnsafeBytes { try txn.put(h.files, key: key, value: $0) }
            }
        case .removeFile(let path):
            _ = try withFileKey(path) { key, _ in try txn.delete(h.files, key: key) }
        case .thumbnail(let key, let header, let data):
            let head = header.encoded
            try key.withEncoded { k in
                try txn.put(h.thumbnails, key: k, reserving: head.count + data.count) { out in
                    head.withUnsafeBytes { out.copyMemory(from: $0) }
                    data.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[head.count...]).copyMemory(from: $0) }
                }
            }
        case .failure(let content, let version, let record):
            try txn.put(h.failures, key: FailureRecord.key(content: content, generatorVersion: version), value: record.encoded)
        case .clearFailure(let content, let version):
            try txn.delete(h.failures, key: FailureRecord.key(content: content, generatorVersion: version))
        case .accessed(let key, let minute):
            var stamp = minute.littleEndian
            try key.withEncoded { k in try withUnsafeBytes(of: &stamp) { try txn.put(h.access, key: k, value: $0) } }
        case .queueUpload(let key, let attributes):
            try key.withEncoded { k in try attributes.withUnsafeBytes { try txn.put(h.uploads, key: k, value: $0) } }
        case .dequeueUpload(let key):
            _ = try key.withEncoded { k in try txn.delete(h.uploads, key: k) }
        }
    }

    /// Flushes commits to disk; needed after writing with ``Durability/deferred``.
    public func sync() throws(StoreError) {
        do { try handles().environment.sync() } catch { throw .wrapping(error, path: directory, operation: "sync") }
    }
}
