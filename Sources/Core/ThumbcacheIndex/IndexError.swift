import ThumbcacheLMDB

/// Why an index operation failed.
public struct IndexError: Error, Sendable, CustomStringConvertible {
    public enum Reason: Sendable {
        /// The database failed; `cause` is the LMDB error as it was (its code and message), so a
        /// caller can tell a full disk from a damaged file.
        case database(cause: any Error)
        /// The index was written in a format this code neither reads nor upgrades (a newer one).
        case formatVersion(found: Int, supported: Int)
        /// An app indexed a value whose type differs from the attribute's.
        case attributeType(name: String, expected: AttributeType, got: AttributeType)
        /// Identifiers and paths must not be empty.
        case invalidItem(String)
    }
    /// The index directory.
    public var path: String
    public var reason: Reason

    package init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .database(let cause): "index at \(path): \(cause)"
        case .formatVersion(let found, let supported):
            "index at \(path) has format version \(found), which this thumbcache (version \(supported), upgrading older ones) "
                + "cannot read: use the thumbcache that wrote it, or delete the directory and warm again (app items are lost)"
        case .attributeType(let name, let expected, let got):
            "index at \(path): attribute \(name) holds \(expected) values, not \(got)"
        case .invalidItem(let message): "index at \(path): \(message)"
        }
    }

    static func wrapping(_ error: any Error, path: String) -> IndexError {
        if let e = error as? IndexError { return e }
        return IndexError(path: path, reason: .database(cause: error))
    }
}
