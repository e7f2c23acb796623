import CLMDB

/// A cursor over one database, lent to the body of ``Transaction/withCursor(_:_:)``.
///
/// Positioning calls return the entry they land on, as views into the map that are valid until
/// the cursor moves or the transaction writes; nil when there is no such entry.
public struct Cursor: ~Copyable {
    let handle: OpaquePointer

    public typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    private func get(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws(LMDBError) -> Entry? {
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        let rc = mdb_cursor_get(handle, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc)
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// The first entry whose key is ≥ `key`.
    public func seek(atLeast key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? { try get(MDB_SET_RANGE, key: key) }
    /// The first entry whose key is ≥ `key`.
    public func seek(atLeast key: [UInt8]) throws(LMDBError) -> Entry? {
        try withBytes(key) { (k) throws(LMDBError) in try seek(atLeast: k) }
    }
    /// The last entry whose key is ≤ `key`.
    public func seek(atMost key: [UInt8]) throws(LMDBError) -> Entry? {
        if let found = try seek(atLeast: key) {
            if found.key.elementsEqual(key) { return found }
            return try previous()
        }
        return try last()
    }
    public func next() throws(LMDBError) -> Entry? { try get(MDB_NEXT) }
    public func previous() throws(LMDBError) -> Entry? { try get(MDB_PREV) }
    public func last() throws(LMDBError) -> Entry? { try get(MDB_LAST) }
}

extension Transaction {
    /// Lends a cursor over `database` to `body`.
    public func withCursor<R>(_ database: Database, _ body: (borrowing Cursor) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        return try body(Cursor(handle: cursor!))
    }
}
