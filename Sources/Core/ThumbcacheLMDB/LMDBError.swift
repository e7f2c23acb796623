import CThumbcacheLMDB

/// An error code returned by LMDB, with LMDB's own message.
///
/// A struct rather than an enum: the set of codes is open (LMDB also returns
/// plain `errno` values), and `catch LMDBError.notFound` still works through `~=`.
public struct LMDBError: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// LMDB's description of the code (`mdb_strerror`), which also covers `errno` values.
    public var description: String { String(cString: mdb_strerror(rawValue)) }

    package static let keyExists = LMDBError(rawValue: MDB_KEYEXIST)
    package static let notFound = LMDBError(rawValue: MDB_NOTFOUND)
    public static let corrupted = LMDBError(rawValue: MDB_CORRUPTED)
    package static let panic = LMDBError(rawValue: MDB_PANIC)
    package static let versionMismatch = LMDBError(rawValue: MDB_VERSION_MISMATCH)
    package static let invalid = LMDBError(rawValue: MDB_INVALID)
    public static let mapFull = LMDBError(rawValue: MDB_MAP_FULL)
    package static let databasesFull = LMDBError(rawValue: MDB_DBS_FULL)
    public static let readersFull = LMDBError(rawValue: MDB_READERS_FULL)
    package static let transactionFull = LMDBError(rawValue: MDB_TXN_FULL)
    package static let cursorFull = LMDBError(rawValue: MDB_CURSOR_FULL)
    package static let pageFull = LMDBError(rawValue: MDB_PAGE_FULL)
    package static let mapResized = LMDBError(rawValue: MDB_MAP_RESIZED)
    package static let incompatible = LMDBError(rawValue: MDB_INCOMPATIBLE)
    package static let badReaderSlot = LMDBError(rawValue: MDB_BAD_RSLOT)
    package static let badTransaction = LMDBError(rawValue: MDB_BAD_TXN)
    package static let badValueSize = LMDBError(rawValue: MDB_BAD_VALSIZE)
    package static let badDatabase = LMDBError(rawValue: MDB_BAD_DBI)

    public static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        (value as? LMDBError) == pattern
    }
}

/// Turns an LMDB return code into a typed error.
@inline(__always)
func check(_ code: Int32) throws(LMDBError) {
    if code != MDB_SUCCESS { throw LMDBError(rawValue: code) }
}

/// Opening or creating an environment failed.
package struct EnvironmentError: Error, Sendable, CustomStringConvertible {
    /// The environment's directory.
    package var path: String
    /// What was being done, such as "open environment".
    package var operation: String
    package var code: LMDBError

    package var description: String { "cannot \(operation) at \(path): \(code)" }
}
