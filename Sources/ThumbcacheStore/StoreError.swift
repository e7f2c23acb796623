import ThumbcacheLMDB

/// A store operation failed: what, and on which cache.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// LMDB failed while doing `operation` on the cache at `path`.
    case database(path: String, operation: String, LMDBError)
    /// The cache was written by a format this version does not read.
    case unsupportedFormat(path: String, found: UInt32, supported: UInt32)
    /// The directory holds an LMDB environment that is not a thumbcache store.
    case notAStore(path: String)
    /// A system call on one of the cache's own files (not LMDB's) failed.
    case system(path: String, operation: String, Errno)
    /// Something other than LMDB failed while doing `operation` on the cache at `path`.
    case other(path: String, operation: String, cause: any Error)
    /// A stored value could not be parsed.
    case corruptRecord(path: String, database: String, key: String)
    /// A write could not be queued: the writer was closed.
    case writerClosed(path: String)
    /// Another process is compacting the cache.
    case busy(path: String)

    public var description: String {
        switch self {
        case .database(let path, let operation, let code):
            "thumbnail cache \(path): \(operation) failed: \(code)"
        case .unsupportedFormat(let path, let found, let supported):
            "thumbnail cache \(path) has format version \(found); this thumbcache reads version \(supported). "
                + "Use a matching thumbcache, or remove the directory to start a new cache."
        case .system(let path, let operation, let errno):
            "thumbnail cache \(path): \(operation) failed: \(errno)"
        case .other(let path, let operation, let cause):
            "thumbnail cache \(path): \(operation) failed: \(cause)"
        case .notAStore(let path):
            "\(path) holds an LMDB database that is not a thumbnail cache; refusing to use it"
        case .corruptRecord(let path, let database, let key):
            "thumbnail cache \(path): unreadable record in '\(database)' at key \(key)"
        case .writerClosed(let path):
            "thumbnail cache \(path): the writer is closed"
        case .busy(let path):
            "thumbnail cache \(path) is being compacted by another process; try again when it is done"
        }
    }
}

extension StoreError {
    /// `error` as a ``StoreError`` about the cache at `path`: a store error as it is, an LMDB error
    /// with the operation that failed, anything else folded into the operation's description.
    static func wrapping(_ error: any Error, path: String, operation: String) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as LMDBError: .database(path: path, operation: operation, error)
        case let error as Errno: .system(path: path, operation: operation, error)
        default: .other(path: path, operation: operation, cause: error)
        }
    }
}
