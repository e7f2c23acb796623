import ThumbcacheSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Commits a store's writes in batches (group commit): many producers hand it groups of writes,
/// and a dedicated thread commits them. Each `ThumbnailGenerator` and each warm has its own;
/// several writers of one store (in one process or many) serialize on LMDB's writer lock.
///
/// A batch closes when it holds ``Policy/maxWrites`` writes or ``Policy/maxBytes`` bytes, when
/// ``Policy/maxDelay`` has passed since its first group arrived, or at once when a producer is
/// waiting for its commit. Each group commits atomically (a thumbnail and its stat entry, say);
/// if a batch fails, its groups are retried one by one so one bad group fails alone.
///
/// Write transactions begin and commit on the writer thread inside one synchronous call, never
/// across an `await`, as LMDB requires. Readers are never blocked.
package final class GroupCommitWriter: Sendable {
    package struct Policy: Sendable, Hashable {
        /// Most writes in one transaction.
        package var maxWrites: Int
        /// Most bytes in one transaction. LMDB slows down sharply with large transactions (its
        /// dirty-page list grows worse than linearly; Docs/PERFORMANCE.md has the figures).
        package var maxBytes: Int
        /// Longest a batch waits to fill, in nanoseconds.
        package var maxDelay: UInt64
        /// Bytes queued beyond which ``enqueue(_:)`` waits for the writer (back-pressure).
        package var queueCapacity: Int
        /// With deferred durability: flush to disk at least this often (nanoseconds).
        package var syncInterval: UInt64

        package init(
            maxWrites: Int = 256, maxBytes: Int = 8 << 20, maxDelay: UInt64 = 10_000_000,
            queueCapacity: Int = 128 << 20, syncInterval: UInt64 = 2_000_000_000
        ) {
            self.maxWrites = maxWrites
            self.maxBytes = maxBytes
            self.maxDelay = maxDelay
            self.queueCapacity = queueCapacity
            self.syncInterval = syncInterval
        }
    }

    /// Counters since the writer started.
    package struct Counters: Sendable, Hashable {
        package var commits = 0
        package var writes = 0
        package var failedGroups = 0
    }

    package let store: ThumbnailStore
    package let policy: Policy
    private let core: WriterCore
    private let thread: pthread_t

    package init(store: ThumbnailStore, policy: Policy = Policy()) {
        self.store = store
        self.policy = policy
        let core = WriterCore(store: store, policy: policy)
        self.core = core
        self.thread = startThread { core.run() }
    }

    deinit {
        core.close()
        pthread_join(thread, nil)
    }

    /// Queues `writes` as one atomic group and returns once they are committed.
    package func submit(_ writes: [StoreWrite]) async throws(StoreError) {
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<Void, StoreError>, Never>) in
            core.append(writes, urgent: true) { c.resume(returning: $0) }
        }
        try result.get()
    }

    /// Queues `writes` as one atomic group without waiting for the commit; waits only while the
    /// queue is over capacity. A failure is collected and returned by ``flush()``.
    package func enqueue(_ writes: [StoreWrite]) async throws(StoreError) {
        try await core.waitForRoom()
        core.append(writes, urgent: false, completion: nil)
    }

    /// Queues `writes` as one atomic group without waiting, calling `completion` on the writer
    /// thread once they are committed or have failed. For callers on their own threads; they
    /// bound what they have in flight themselves. The group waits for the batch window like
    /// any other; use ``submit(_:)`` to have it committed at once.
    package func enqueue(_ writes: [StoreWrite], completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        core.append(writes, urgent: false, completion: completion)
    }

    /// Waits until everything queued so far is committed (and, with deferred durability, synced).
    /// - Returns: the failures of groups queued with ``enqueue(_:)`` since the last flush.
    @discardableResult
    package func flush() async -> [StoreError] {
        await withCheckedContinuation { (c: CheckedContinuation<[StoreError], Never>) in
            core.addFlushWaiter { c.resume(returning: $0) }
        }
    }

    /// Counters since the writer started.
    package var counters: Counters { core.counters }

    /// Commits what is queued, stops the thread, and refuses later writes.
    package func close() {
        core.close()
    }
}

/// The writer's shared state and its thread's loop.
///
/// `@unchecked Sendable`: every `var` is read and written only with `lock` held.
private final class WriterCore: @unchecked Sendable {
    typealias Completion = @Sendable (Result<Void, StoreError>) -> Void

    struct Group {
        var writes: [StoreWrite]
        var bytes: Int
        var urgent: Bool
        var completion: Completion?
        var arrived: UInt64
    }

    let store: ThumbnailStore
    let policy: GroupCommitWriter.Policy
    let lock = ConditionLock()

    // Guarded by `lock`.
    var queue: [Group] = []
    var queueHead = 0
    var queuedBytes = 0
    var urgentQueued = 0
    var committing = false
    var closing = false
    var roomWaiters: [CheckedContinuation<Result<Void, StoreError>, Never>] = []
    var flushWaiters: [@Sendable ([StoreError]) -> Void] = []
    var deferredFailures: [StoreError] = []
    var counters = GroupCommitWriter.Counters()
    var lastSync = MonotonicClock.nanoseconds()
    /// Commits since the last sync (deferred durability): nothing to flush when false.
    var unsynced = false

    init(store: ThumbnailStore, policy: GroupCommitWriter.Policy) {
        self.store = store
        self.policy = policy
    }

    var pending: Int { queue.count - queueHead }

    func append(_ writes: [StoreWrite], urgent: Bool, completion: Completion?) {
        let bytes = writes.reduce(0) { $0 + $1.byteCount }
        let refused: Bool = lock.withLock {
            if closing { return true }
            queue.append(Group(writes: writes, bytes: bytes, urgent: urgent, completion: completion, arrived: MonotonicClock.nanoseconds()))
            queuedBytes += bytes
            if urgent { urgentQueued += 1 }
            // Wake the writer only when its wait can end: the first group of a batch, a full
            // batch, or someone waiting. Waking it for every group costs a context switch each.
            if pending == 1 || urgent || pending >= policy.maxWrites || queuedBytes >= policy.maxBytes {
                lock.broadcast()
            }
            return false
        }
        if refused {
            let error = StoreError(path: store.directory, reason: .writerClosed)
            if let completion { completion(.failure(error)) } else { lock.withLock { deferredFailures.append(error) } }
        }
    }

    func waitForRoom() async throws(StoreError) {
        // Fast path: room now, no suspension.
        let roomNow = lock.withLock { !closing && queuedBytes < policy.queueCapacity }
        if roomNow { return }
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<Void, StoreError>, Never>) in
            let resumeNow: Result<Void, StoreError>? = lock.withLock {
                if closing { return .failure(StoreError(path: store.directory, reason: .writerClosed)) }
                if queuedBytes < policy.queueCapacity { return .success(()) }
                roomWaiters.append(c)
                return nil
            }
            if let resumeNow { c.resume(returning: resumeNow) }
        }
        try result.get()
    }

    func addFlushWaiter(_ waiter: @escaping @Sendable ([StoreError]) -> Void) {
        let now: [StoreError]? = lock.withLock {
            if pending == 0 && !committing {
                defer { deferredFailures = [] }
                return deferredFailures
            }
            flushWaiters.append(waiter)
            lock.broadcast()
            return nil
        }
        if let now {
            syncIfNeeded()
            waiter(now)
        }
    }

    func close() {
        lock.withLock {
            closing = true
            lock.broadcast()
        }
    }

    /// The writer thread.
    func run() {
        while let batch = nextBatch() {
            commit(batch)
        }
        syncIfNeeded()
        // Wake anyone still waiting; nothing is queued any more.
        let (rooms, flushes, failures) = lock.withLock {
            defer {
                roomWaiters = []
                flushWaiters = []
            }
            return (roomWaiters, flushWaiters, deferredFailures)
        }
        for c in rooms { c.resume(returning: .failure(StoreError(path: store.directory, reason: .writerClosed))) }
        for f in flushes { f(failures) }
    }

    /// Waits for work and takes the next batch; nil when closed and drained.
    private func nextBatch() -> [Group]? {
        lock.lock()
        defer { lock.unlock() }
        while pending == 0 {
            if closing { return nil }
            lock.wait()
        }
        // The group-commit window: let the batch fill unless someone waits or it is full.
        let deadline = queue[queueHead].arrived + policy.maxDelay
        while !closing && urgentQueued == 0 && flushWaiters.isEmpty && pending < policy.maxWrites
            && queuedBytes < policy.maxBytes
        {
            if !lock.wait(until: deadline) { break }
        }
        var batch: [Group] = []
        var writes = 0
        var bytes = 0
        while queueHead < queue.count {
            let g = queue[queueHead]
            if !batch.isEmpty && (writes + g.writes.count > policy.maxWrites || bytes + g.bytes > policy.maxBytes) { break }
            batch.append(g)
            writes += g.writes.count
            bytes += g.bytes
            queueHead += 1
            queuedBytes -= g.bytes
            if g.urgent { urgentQueued -= 1 }
        }
        if queueHead > 1024 && queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
        committing = true
        return batch
    }

    private func commit(_ batch: [Group]) {
        var results: [Result<Void, StoreError>]
        do {
            try store.apply(batch.flatMap(\.writes))
            results = Array(repeating: .success(()), count: batch.count)
        } catch {
            // Isolate the failing group: commit the groups one by one.
            results = batch.count == 1
                ? [.failure(error)]
                : batch.map { g in Result { () throws(StoreError) in try store.apply(g.writes) } }
        }
        var syncError: StoreError?
        let now = MonotonicClock.nanoseconds()
        lock.withLock { unsynced = true }
        if store.environment.options.durability == .deferred && now - lastSync >= policy.syncInterval {
            do { try store.sync() } catch { syncError = error }
            lastSync = now
            lock.withLock { unsynced = false }
        }
        var rooms: [CheckedContinuation<Result<Void, StoreError>, Never>] = []
        var flushes: [@Sendable ([StoreError]) -> Void] = []
        var failuresForFlush: [StoreError] = []
        lock.withLock {
            committing = false
            counters.commits += 1
            for (g, r) in zip(batch, results) {
                switch r {
                case .success: counters.writes += g.writes.count
                case .failure(let e):
                    counters.failedGroups += 1
                    if g.completion == nil { deferredFailures.append(e) }
                }
            }
            if let syncError { deferredFailures.append(syncError) }
            if queuedBytes < policy.queueCapacity {
                rooms = roomWaiters
                roomWaiters = []
            }
            if pending == 0 && !flushWaiters.isEmpty {
                flushes = flushWaiters
                flushWaiters = []
                failuresForFlush = deferredFailures
                deferredFailures = []
            }
        }
        for (g, r) in zip(batch, results) { g.completion?(r) }
        for c in rooms { c.resume(returning: .success(())) }
        if !flushes.isEmpty {
            if let error = syncIfNeeded() { failuresForFlush.append(error) }
            for f in flushes { f(failuresForFlush) }
        }
    }

    /// With deferred durability, flushes to disk if anything was committed since the last flush.
    @discardableResult
    func syncIfNeeded() -> StoreError? {
        guard store.environment.options.durability == .deferred else { return nil }
        let needed = lock.withLock { () -> Bool in
            defer { unsynced = false }
            return unsynced
        }
        guard needed else { return nil }
        lock.withLock { lastSync = MonotonicClock.nanoseconds() }
        do { try store.sync() } catch { return error }
        return nil
    }
}
