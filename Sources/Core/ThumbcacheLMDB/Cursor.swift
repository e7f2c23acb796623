import CThumbcacheLMDB

/// A cursor over one database, lent to the body of ``Transaction/withCursor(_:_:)``.
///
/// Positioning calls return the entry they land on, as views into the map that are valid until
/// the cursor moves or the transaction writes; nil when there is no such entry.
///
/// A cursor remembers its leaf page: a seek or put near the last position is answered from that
/// page instead of a search from the root, so batches of writes in key order go through one.
package struct Cursor: ~Copyable {
    let handle: OpaquePointer

    package typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    private func get(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws(LMDBError) -> Entry? {
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        let rc = mdb_cursor_get(handle, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc)
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// The first entry whose key is ≥ `key`.
    package func seek(atLeast key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? { try get(MDB_SET_RANGE, key: key) }
    /// The first entry whose key is ≥ `key`.
    package func seek(atLeast key: [UInt8]) throws(LMDBError) -> Entry? {
        try withBytes(key) { (k) throws(LMDBError) in try seek(atLeast: k) }
    }
    /// The last entry whose key is ≤ `key`.
    package func seek(atMost key: [UInt8]) throws(LMDBError) -> Entry? {
        if let found = try seek(atLeast: key) {
            if found.key.elementsEqual(key) { return found }
            return try previous()
        }
        return try last()
    }
    /// The entry whose key is `key`.
    package func seek(exactly key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? { try get(MDB_SET_KEY, key: key) }
    /// The entry whose key is `key`.
    package func seek(exactly key: [UInt8]) throws(LMDBError) -> Entry? {
        try withBytes(key) { (k) throws(LMDBError) in try seek(exactly: k) }
    }
    package func next() throws(LMDBError) -> Entry? { try get(MDB_NEXT) }
    package func previous() throws(LMDBError) -> Entry? { try get(MDB_PREV) }
    package func last() throws(LMDBError) -> Entry? { try get(MDB_LAST) }

    /// Stores `value` under `key` (writable transactions), leaving the cursor on it.
    /// - Parameter append: a hint that `key` sorts after every key: no search at all.
    package func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, append: Bool = false) throws(LMDBError) {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        var rc = mdb_cursor_put(handle, &k, &v, append ? UInt32(MDB_APPEND) : 0)
        if rc == MDB_KEYEXIST && append {  // not after every key after all
            v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            rc = mdb_cursor_put(handle, &k, &v, 0)
        }
        try check(rc)
    }

    package func put(_ key: [UInt8], _ value: [UInt8], append: Bool = false) throws(LMDBError) {
        try withBytes(key) { (k) throws(LMDBError) in
            try withBytes(value) { (v) throws(LMDBError) in try put(k, v, append: append) }
        }
    }

    /// Stores `value` under `key` unless the key is there: then returns the value found (the
    /// cursor on it) and stores nothing. One search where `seek(exactly:)` and `put` take two.
    package func insert(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_cursor_put(handle, &k, &v, UInt32(MDB_NOOVERWRITE))
        if rc == MDB_KEYEXIST { return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size) }
        try check(rc)
        return nil
    }

    /// Deletes the entry the cursor is on.
    package func deleteCurrent() throws(LMDBError) { try check(mdb_cursor_del(handle, 0)) }

    /// Deletes the entry under `key`; returns false if there was none.
    @discardableResult
    package func delete(_ key: [UInt8]) throws(LMDBError) -> Bool {
        guard try seek(exactly: key) != nil else { return false }
        try check(mdb_cursor_del(handle, 0))
        return true
    }
}

extension Transaction {
    /// Lends a cursor over `database` to `body`.
    package func withCursor<R>(_ database: Database, _ body: (borrowing Cursor) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        return try body(Cursor(handle: cursor!))
    }
}
