import CThumbcacheLMDB

extension Environment {
    /// The environment's main database, whose keys are the names of the named databases.
    package var mainDatabase: Database { Database(name: "", dbi: 1) }  // MAIN_DBI

    /// Names of the named databases that exist.
    package func databaseNames() throws -> [String] {
        try read { txn in
            var names: [String] = []
            try txn.forEach(mainDatabase) { key, _ in
                names.append(String(decoding: key, as: UTF8.self))
                return true
            }
            return names
        }
    }

    /// Pages on LMDB's free list: space inside the file that new writes reuse.
    ///
    /// Each free-list record holds a page-number list whose first word is its length
    /// (as `mdb_stat -f` reads it).
    package func freePageCount() throws -> Int {
        try read { txn in
            var pages = 0
            try txn.forEach(Database(name: "(free)", dbi: 0)) { _, value in  // FREE_DBI
                if value.count >= MemoryLayout<Int>.size {
                    pages += value.loadUnaligned(as: Int.self)
                }
                return true
            }
            return pages
        }
    }
}

extension Environment {
    /// Writes a compacted copy (free pages dropped, pages renumbered) into the existing, empty
    /// `directory` (`mdb_env_copy2` with `MDB_CP_COMPACT`). The copy reads one consistent snapshot
    /// through a read-only transaction, so a caller may hold a write transaction meanwhile (with
    /// `MDB_NOTLS`) to keep any commit from landing after the snapshot.
    package func copyCompacted(to directory: String) throws(LMDBError) {
        try check(mdb_env_copy2(handle, directory, UInt32(MDB_CP_COMPACT)))
    }
}
