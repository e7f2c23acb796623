import CThumbcacheLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB environment: one memory-mapped file holding named databases.
///
/// Open it with ``open(directory:options:)``, which returns the instance already open in this
/// process for the same directory (LMDB forbids opening one file twice in a process).
/// Transactions are scoped: ``read(_:)`` and ``write(_:)`` lend a ``Transaction`` to a closure;
/// `write` commits when the closure returns and aborts when it throws.
///
/// The environment is opened with `MDB_NOTLS`, so a read transaction is not tied to a thread and
/// Swift tasks may hop threads freely. `MDB_MAP_FULL` never reaches the caller: the map grows
/// and the write runs again.
///
/// `@unchecked Sendable`: LMDB documents an `MDB_env` as safe to use from many threads; the
/// Swift state next to it is immutable or guarded by `Mutex` and ``ResizeLock``.
package final class Environment: @unchecked Sendable {
    /// How commits reach the disk.
    package enum Durability: Sendable, Hashable {
        /// Every commit is flushed (`fsync`) before `write` returns: survives power loss.
        case everyCommit
        /// A commit's data is flushed, its meta page only written (`MDB_NOMETASYNC`): one flush
        /// a commit instead of two. The file stays intact through power loss, which may undo the
        /// last commit (the next commit's flush carries the one before).
        case lastCommitMayBeLost
        /// Commits are written to the OS without flushing (`MDB_NOSYNC`); ``sync()`` flushes.
        /// Safe against any process crash, including SIGKILL; an OS crash or power loss may lose
        /// commits since the last ``sync()`` and can damage the file.
        case deferred
    }

    package struct Options: Sendable, Hashable {
        /// Initial map size in bytes; the map grows on demand.
        package var mapSize: Int
        package var maxDatabases: Int
        package var maxReaders: Int
        package var durability: Durability
        /// Permission bits of the directory, if it has to be created.
        package var directoryMode: mode_t
        /// Permission bits of the data and lock files.
        package var fileMode: mode_t

        package init(
            mapSize: Int = 64 << 20, maxDatabases: Int = 16, maxReaders: Int = 126,
            durability: Durability = .everyCommit, directoryMode: mode_t = 0o700, fileMode: mode_t = 0o600
        ) {
            self.mapSize = mapSize
            self.maxDatabases = maxDatabases
            self.maxReaders = maxReaders
            self.durability = durability
            self.directoryMode = directoryMode
            self.fileMode = fileMode
        }
    }

    /// The directory holding `data.mdb` and `lock.mdb`, as given to ``open(directory:options:)``.
    package let directory: String
    package let options: Options
    /// Stale reader slots of dead processes cleared when this environment was opened.
    package let staleReadersCleared: Int

    let handle: OpaquePointer
    private let resizeLock = ResizeLock()
    private let readPool = Mutex<[IdleReader]>([])
    /// One idle reader kept outside the pool: taken and returned with one atomic exchange, so a
    /// single reader (the common case) never takes the pool's lock. Holds the pointer's bits, 0 if empty.
    private let readSlot = Atomic<UInt>(0)
    private let readsBegun = Atomic<Int>(0)
    /// The handles opened, by name: a handful, so a list. A dictionary keyed by `String` made a
    /// process made for one file look up `String: Hashable` among every conformance linked in
    /// (a few hundred microseconds of a cache hit, PERFORMANCE.md).
    private let databases = Mutex<[Database]>([])
    private static let readPoolLimit = 8

    /// This process's open environments by canonical path (a list, as ``databases`` is).
    private static let registry = Mutex<[(path: String, environment: WeakEnvironment)]>([])

    /// Opens (creating if needed) the environment in `directory`, or returns the one this
    /// process already has open there.
    package static func open(directory: String, options: Options = Options()) throws(EnvironmentError) -> Environment {
        try makeDirectory(directory, mode: options.directoryMode)
        guard let canonical = realpath(directory, nil) else {
            throw EnvironmentError(path: directory, operation: "resolve path", code: LMDBError(rawValue: errno))
        }
        let key = String(cString: canonical)
        free(canonical)
        return try registry.withLock { (registry) throws(EnvironmentError) -> Environment in
            if let existing = registry.first(where: { $0.path == key })?.environment.environment { return existing }
            let environment = try Environment(directory: directory, options: options)
            registry.removeAll { $0.path == key || $0.environment.environment == nil }
            registry.append((key, WeakEnvironment(environment: environment)))
            return environment
        }
    }

    private init(directory: String, options: Options) throws(EnvironmentError) {
        self.directory = directory
        self.options = options
        func fail(_ op: String, _ rc: Int32) -> EnvironmentError {
            EnvironmentError(path: directory, operation: op, code: LMDBError(rawValue: rc))
        }
        var env: OpaquePointer?
        var rc = mdb_env_create(&env)
        guard rc == MDB_SUCCESS, let env else { throw fail("create environment", rc) }
        rc = mdb_env_set_maxdbs(env, MDB_dbi(options.maxDatabases))
        if rc == MDB_SUCCESS { rc = mdb_env_set_maxreaders(env, UInt32(options.maxReaders)) }
        if rc == MDB_SUCCESS { rc = mdb_env_set_mapsize(env, Environment.roundToPage(options.mapSize)) }
        if rc != MDB_SUCCESS {
            mdb_env_close(env)
            throw fail("configure environment", rc)
        }
        var flags = UInt32(MDB_NOTLS)
        switch options.durability {
        case .everyCommit: break
        case .lastCommitMayBeLost: flags |= UInt32(MDB_NOMETASYNC)
        case .deferred: flags |= UInt32(MDB_NOSYNC)
        }
        rc = mdb_env_open(env, directory, flags, options.fileMode)
        if rc != MDB_SUCCESS {
            mdb_env_close(env)
            throw fail("open environment", rc)
        }
        var dead: Int32 = 0
        rc = mdb_reader_check(env, &dead)
        if rc != MDB_SUCCESS {
            mdb_env_close(env)
            throw fail("clear stale readers", rc)
        }
        self.handle = env
        self.staleReadersCleared = Int(dead)
    }

    deinit {
        for idle in readPool.withLock({ $0 }) { mdb_txn_abort(idle.txn) }
        if let txn = OpaquePointer(bitPattern: readSlot.exchange(0, ordering: .acquiring)) { mdb_txn_abort(txn) }
        mdb_env_close(handle)
    }

    // MARK: Databases

    /// Opens the named database, creating it if `create` is true (which takes a write transaction).
    /// Handles are cached: later calls cost a look through a short list.
    package func database(_ name: String, create: Bool = true) throws(LMDBError) -> Database {
        if let known = databases.withLock({ $0.first { $0.name == name } }) { return known }
        let open = { (txn: borrowing Transaction, flags: Int32) throws(LMDBError) -> Database in
            var dbi: MDB_dbi = 0
            try check(mdb_dbi_open(txn.handle, name, UInt32(flags), &dbi))
            return Database(name: name, dbi: dbi)
        }
        // A read transaction first, so that opening an existing database never waits for writers.
        // Its commit makes the handle usable by every later transaction.
        let lookup = { (txn: borrowing Transaction) throws(LMDBError) -> Database? in
            var dbi: MDB_dbi = 0
            let rc = mdb_dbi_open(txn.handle, name, 0, &dbi)
            if rc == MDB_NOTFOUND { return nil }
            try check(rc)
            return Database(name: name, dbi: dbi)
        }
        let existing: Database?
        do {
            existing = try withReadHandle(lookup, commit: true)
        } catch let error as LMDBError {
            throw error
        } catch {
            fatalError("unreachable: lookup throws only LMDBError, got \(error)")
        }
        let db: Database
        if let existing {
            db = existing
        } else if create {
            db = try writeTyped { (txn) throws(LMDBError) in try open(txn, MDB_CREATE) }
        } else {
            throw .notFound
        }
        databases.withLock { list in if !list.contains(where: { $0.name == name }) { list.append(db) } }
        return db
    }

    // MARK: Transactions

    /// Runs `body` in a read-only transaction. Readers never wait for writers.
    package func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        readsBegun.add(1, ordering: .relaxed)
        return try withReadHandle(body, commit: false)
    }

    /// How many read transactions this process has run here (tests count a path's reads with it).
    package var readTransactionCount: Int { readsBegun.load(ordering: .relaxed) }

    /// Runs `body` in a write transaction and commits when it returns; aborts if it throws.
    ///
    /// `body` may run more than once: if the map is full the transaction is aborted, the map
    /// grows, and `body` runs again. Keep side effects outside the transaction out of it.
    package func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        while true {
            resizeLock.lockShared()
            var txn: OpaquePointer?
            var rc = mdb_txn_begin(handle, nil, 0, &txn)
            if rc == MDB_MAP_RESIZED {
                resizeLock.unlock()
                try adoptGrownMap()
                continue
            }
            guard rc == MDB_SUCCESS, let txn else {
                resizeLock.unlock()
                throw LMDBError(rawValue: rc)
            }
            let result: R
            do {
                result = try body(Transaction(handle: txn, isWritable: true))
            } catch LMDBError.mapFull {
                mdb_txn_abort(txn)
                resizeLock.unlock()
                try grow()
                continue
            } catch {
                mdb_txn_abort(txn)
                resizeLock.unlock()
                throw error
            }
            rc = mdb_txn_commit(txn)  // frees txn whatever the outcome
            resizeLock.unlock()
            if rc == MDB_MAP_FULL {
                try grow()
                continue
            }
            try check(writeFailure(rc))
            return result
        }
    }

    /// `write` for bodies that only throw `LMDBError`, keeping the error typed.
    func writeTyped<R>(_ body: (borrowing Transaction) throws(LMDBError) -> R) throws(LMDBError) -> R {
        do {
            return try write { txn in try body(txn) }
        } catch let error as LMDBError {
            throw error
        } catch {
            fatalError("unreachable: body throws only LMDBError, got \(error)")
        }
    }

    private func withReadHandle<R, E: Error>(
        _ body: (borrowing Transaction) throws(E) -> R, commit: Bool
    ) throws -> R {
        while true {
            resizeLock.lockShared()
            var txn: OpaquePointer? = commit ? nil : takeIdleReader()
            var rc: Int32 = MDB_SUCCESS
            if let pooled = txn {
                rc = mdb_txn_renew(pooled)
                if rc != MDB_SUCCESS {
                    mdb_txn_abort(pooled)
                    txn = nil
                }
            }
            if txn == nil {
                rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
            }
            if rc == MDB_MAP_RESIZED {
                resizeLock.unlock()
                try adoptGrownMap()
                continue
            }
            guard rc == MDB_SUCCESS, let txn else {
                resizeLock.unlock()
                throw LMDBError(rawValue: rc)
            }
            defer { resizeLock.unlock() }
            let result: R
            do {
                result = try body(Transaction(handle: txn, isWritable: false))
            } catch {
                recycle(txn)
                throw error
            }
            if commit {
                try check(mdb_txn_commit(txn))
            } else {
                recycle(txn)
            }
            return result
        }
    }

    private func takeIdleReader() -> OpaquePointer? {
        if let txn = OpaquePointer(bitPattern: readSlot.exchange(0, ordering: .acquiring)) { return txn }
        return readPool.withLock { $0.popLast()?.txn }
    }

    private func recycle(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(txn)))
        if readSlot.compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged { return }
        let idle = IdleReader(txn: txn)
        let kept = readPool.withLock { (pool) -> Bool in
            guard pool.count < Environment.readPoolLimit else { return false }
            pool.append(idle)
            return true
        }
        if !kept { mdb_txn_abort(txn) }
    }

    // MARK: Map size

    /// Another process grew the map: adopt its size.
    private func adoptGrownMap() throws(LMDBError) {
        resizeLock.lockExclusive()
        defer { resizeLock.unlock() }
        try check(mdb_env_set_mapsize(handle, 0))
    }

    /// Doubles the map (by at most 1 GiB at a time), unless another thread already grew it.
    private func grow() throws(LMDBError) {
        let before = info().mapSize
        resizeLock.lockExclusive()
        defer { resizeLock.unlock() }
        let current = info().mapSize
        guard current == before else { return }  // someone else grew it meanwhile
        let step = min(max(current, 1 << 20), 1 << 30)
        try check(mdb_env_set_mapsize(handle, Environment.roundToPage(current + step)))
    }

    private static func roundToPage(_ size: Int) -> Int {
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        return (size + page - 1) / page * page
    }

    /// The flags LMDB holds for this environment (`MDB_NOSYNC`, `MDB_NOMETASYNC`…), as it applies them.
    package var flags: UInt32 {
        var flags: UInt32 = 0
        _ = mdb_env_get_flags(handle, &flags)
        return flags
    }

    /// Flushes written commits to disk (`fsync`); needed with ``Durability/deferred``.
    package func sync() throws(LMDBError) {
        try check(writeFailure(mdb_env_sync(handle, 1)))
    }

    /// LMDB reports a short write as EIO; when the file system is full that is ENOSPC, which
    /// tells the user what to do.
    private func writeFailure(_ rc: Int32) -> Int32 {
        guard rc == EIO, let free = fileSystemFreeBytes else { return rc }
        return free < Self.fullFileSystemBytes ? ENOSPC : rc
    }

    /// Below this many free bytes a failed write is put down to a full file system: a commit
    /// writes whole pages, and one that did not fit leaves less than this behind.
    package static let fullFileSystemBytes = 1 << 20

    /// Bytes an unprivileged process can still write on the file system holding the environment.
    package var fileSystemFreeBytes: Int? {
        var fs = statvfs()
        guard statvfs(directory, &fs) == 0 else { return nil }
        return Int(clamping: UInt64(fs.f_bavail) &* UInt64(fs.f_frsize))
    }

    private static func makeDirectory(_ path: String, mode: mode_t) throws(EnvironmentError) {
        if mkdir(path, mode) == 0 || errno == EEXIST { return }
        if errno == ENOENT {
            // Create missing parents with the same private mode.
            var parent = path
            while parent.hasSuffix("/") && parent.count > 1 { parent.removeLast() }
            if let slash = parent.lastIndex(of: "/"), slash != parent.startIndex {
                try makeDirectory(String(parent[..<slash]), mode: mode)
                if mkdir(path, mode) == 0 || errno == EEXIST { return }
            }
        }
        throw EnvironmentError(path: path, operation: "create directory", code: LMDBError(rawValue: errno))
    }
}

/// A reset read transaction kept for reuse: `mdb_txn_renew` is cheaper than `mdb_txn_begin`,
/// because the reader slot is kept and the reader table's mutex is not taken.
///
/// `@unchecked Sendable`: with `MDB_NOTLS` a read transaction is not tied to a thread, and a
/// reset one is owned by the pool alone until it is taken out again.
private struct IdleReader: @unchecked Sendable {
    let txn: OpaquePointer
}

private struct WeakEnvironment {
    weak var environment: Environment?
}
