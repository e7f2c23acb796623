import ThumbcacheLMDB

/// A store operation failed: on which cache, doing what, and why.
///
/// A struct like ``FileError`` and the index's `IndexError`: every store error names the cache
/// directory; ``reason`` keeps an underlying error whole, so a caller can still tell a full disk
/// (`Errno` or an LMDB code) from a damaged file.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Reason: Sendable {
        /// A call failed; `cause` is its error as it was: an LMDB error with its code, an
        /// `Errno` for a system call on one of the cache's own files, or another error.
        case failed(cause: any Error)
        /// The cache was written by a format this version does not read.
        case unsupportedFormat(found: UInt32, supported: UInt32)
        /// The directory holds an LMDB environment that is not a thumbcache store.
        case notAStore
        /// A stored value could not be parsed.
        case corruptRecord(database: String, key: String)
        /// A write could not be queued: the writer was closed.
        case writerClosed
        /// Another process is compacting the cache.
        case busy
    }

    /// The cache directory (or, for a failure inside one generation, that generation's directory).
    public var path: String
    /// What was being done, such as "open compact.lock"; `nil` where the reason says it all.
    public var operation: String?
    public var reason: Reason

    package init(path: String, operation: String? = nil, reason: Reason) {
        self.path = path
        self.operation = operation
        self.reason = reason
    }

    /// The underlying error of a ``Reason/failed(cause:)``.
    public var cause: (any Error)? {
        if case .failed(let cause) = reason { cause } else { nil }
    }

    public var description: String {
        let subject = "thumbnail cache \(path)"
        switch reason {
        case .failed(let cause):
            return "\(subject): \(operation ?? "operation") failed: \(cause)"
        case .unsupportedFormat(let found, let supported):
            return "\(subject) has format version \(found); this thumbcache reads version \(supported). "
                + "Use a matching thumbcache, or remove the directory to start a new cache."
        case .notAStore:
            return "\(path) holds an LMDB database that is not a thumbnail cache; refusing to use it"
        case .corruptRecord(let database, let key):
            return "\(subject): unreadable record in '\(database)' at key \(key)"
        case .writerClosed:
            return "\(subject): the writer is closed"
        case .busy:
            return "\(subject) is being compacted by another process; try again when it is done"
        }
    }
}

extension StoreError {
    /// `error` as a ``StoreError`` about the cache at `path`: a store error as it is, anything
    /// else kept whole as the cause of `operation` failing.
    static func wrapping(_ error: any Error, path: String, operation: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? EnvironmentError {
            return StoreError(path: path, operation: error.operation, reason: .failed(cause: error.code))
        }
        return StoreError(path: path, operation: operation, reason: .failed(cause: error))
    }

    /// `operation` on `path` failed with the calling thread's `errno`.
    static func system(_ operation: String, path: String) -> StoreError {
        StoreError(path: path, operation: operation, reason: .failed(cause: Errno.current))
    }
}
