import CThumbcacheLMDB

/// A handle to a named database inside an environment; valid for the environment's lifetime.
package struct Database: Hashable, Sendable {
    package let name: String
    let dbi: MDB_dbi
}

/// A transaction, lent to the body of ``Environment/read(_:)`` or ``Environment/write(_:)``.
///
/// It is non-copyable so that it cannot escape its scope. Byte views it returns point into the
/// memory map and are valid only until the scope ends: copy out what must outlive it.
package struct Transaction: ~Copyable {
    let handle: OpaquePointer
    /// True for transactions lent by ``Environment/write(_:)``.
    package let isWritable: Bool

    /// The number of the snapshot a read transaction sees (`mdb_txn_id`): two read transactions
    /// with the same number see the same data.
    package var snapshot: Int { Int(mdb_txn_id(handle)) }

    /// The value stored under `key`, as a view into the map, or nil if there is none.
    package func get(_ database: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(handle, database.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc)
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// Whether `key` has a value, without touching the value: a value too large for its leaf page
    /// (a thumbnail, as a rule) lives in pages of its own, which `get` would fault into memory
    /// (a cursor set with no data wanted reads only the key's page).
    package func contains(_ database: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_cursor_get(cursor, &k, nil, MDB_SET)
        if rc == MDB_NOTFOUND { return false }
        try check(rc)
        return true
    }

    /// Whether `key` has a value, without touching the value.
    package func contains(_ database: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        try withBytes(key) { (k) throws(LMDBError) in try contains(database, key: k) }
    }

    /// The value stored under `key`, as a view into the map, or nil if there is none.
    package func get(_ database: Database, key: [UInt8]) throws(LMDBError) -> UnsafeRawBufferPointer? {
        try withBytes(key) { (k) throws(LMDBError) in try get(database, key: k) }
    }

    /// Stores `value` under `key`, replacing what was there.
    package func put(_ database: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError) {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try check(mdb_put(handle, database.dbi, &k, &v, 0))
    }

    /// Stores `value` under `key`, replacing what was there.
    package func put(_ database: Database, key: [UInt8], value: [UInt8]) throws(LMDBError) {
        try withBytes(key) { (k) throws(LMDBError) in
            try withBytes(value) { (v) throws(LMDBError) in try put(database, key: k, value: v) }
        }
    }

    /// Reserves `count` bytes under `key` and lets `fill` write the value in place,
    /// which saves a copy for large values.
    package func put(
        _ database: Database, key: UnsafeRawBufferPointer, reserving count: Int,
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: count, mv_data: nil)
        try check(mdb_put(handle, database.dbi, &k, &v, UInt32(MDB_RESERVE)))
        fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
    }

    /// Deletes `key`; returns false if it was not there.
    @discardableResult
    package func delete(_ database: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(handle, database.dbi, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try check(rc)
        return true
    }

    /// Deletes `key`; returns false if it was not there.
    @discardableResult
    package func delete(_ database: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        try withBytes(key) { (k) throws(LMDBError) in try delete(database, key: k) }
    }

    /// Number of entries in `database` as of this transaction.
    package func count(_ database: Database) throws(LMDBError) -> Int {
        try statistics(database).entries
    }

    /// B-tree statistics of `database` as of this transaction.
    package func statistics(_ database: Database) throws(LMDBError) -> DatabaseStatistics {
        var s = MDB_stat()
        try check(mdb_stat(handle, database.dbi, &s))
        return DatabaseStatistics(s)
    }

    /// Removes every entry of `database`, keeping the database itself.
    package func removeAll(_ database: Database) throws(LMDBError) {
        try check(mdb_drop(handle, database.dbi, 0))
    }

    /// Visits entries in key order starting at the first key ≥ `start` (or the first key),
    /// until `body` returns false. Views are valid only inside `body`.
    package func forEach(
        _ database: Database, from start: UnsafeRawBufferPointer? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, database.dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc: Int32
        if let start {
            k = MDB_val(mv_size: start.count, mv_data: UnsafeMutableRawPointer(mutating: start.baseAddress))
            rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
        } else {
            rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        }
        while rc == MDB_SUCCESS {
            let keep = try body(
                UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            if !keep { return }
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { throw LMDBError(rawValue: rc) }
    }
}

/// B-tree statistics of one database (`mdb_stat`).
package struct DatabaseStatistics: Sendable, Hashable {
    package var entries: Int
    package var depth: Int
    package var branchPages: Int
    package var leafPages: Int
    package var overflowPages: Int
    package var pageSize: Int

    /// Pages the database occupies, all kinds together.
    package var pages: Int { branchPages + leafPages + overflowPages }

    init(_ s: MDB_stat) {
        entries = s.ms_entries
        depth = Int(s.ms_depth)
        branchPages = s.ms_branch_pages
        leafPages = s.ms_leaf_pages
        overflowPages = s.ms_overflow_pages
        pageSize = Int(s.ms_psize)
    }
}

/// `Array.withUnsafeBytes` keeping the body's error type.
@inline(__always)
func withBytes<R>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(LMDBError) -> R) throws(LMDBError) -> R {
    let result: Result<R, LMDBError> = array.withUnsafeBytes { bytes in Result { () throws(LMDBError) in try body(bytes) } }
    return try result.get()
}
