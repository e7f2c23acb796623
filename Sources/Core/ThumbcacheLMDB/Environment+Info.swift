import CThumbcacheLMDB

extension Environment {
    /// Sizes and counters of the environment as this process sees it.
    package func info() -> EnvironmentInfo {
        var i = MDB_envinfo()
        var s = MDB_stat()
        mdb_env_info(handle, &i)
        mdb_env_stat(handle, &s)
        return EnvironmentInfo(
            mapSize: i.me_mapsize, lastPage: i.me_last_pgno, pageSize: Int(s.ms_psize),
            lastTransactionID: i.me_last_txnid, maxReaders: Int(i.me_maxreaders), readersUsed: Int(i.me_numreaders))
    }

    /// Largest key LMDB accepts in this environment.
    package var maxKeySize: Int { Int(mdb_env_get_maxkeysize(handle)) }
}

/// Sizes and counters of an environment.
package struct EnvironmentInfo: Sendable, Hashable {
    /// Size of the memory map, the most the file can currently grow to.
    package var mapSize: Int
    /// Number of the last page in use.
    package var lastPage: Int
    package var pageSize: Int
    package var lastTransactionID: Int
    package var maxReaders: Int
    package var readersUsed: Int
    /// Bytes of the file in use (up to the last used page, free pages inside included).
    package var usedBytes: Int { (lastPage + 1) * pageSize }
}
