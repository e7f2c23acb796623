#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheImaging
import ThumbcacheSync

/// Long-lived, confined worker processes that decode files for this process: a crash, a hang
/// or an exploit in a decoder costs the file it was decoding, never the caller.
///
/// A file goes to a worker of its format's ``WorkerFamily`` (images, vector, heavy, documents,
/// media), each a program that loads only its family's libraries; a worker may hand a file on to
/// another family's (the image worker's HEIF path to libheif's), once. Workers start on first use
/// of their family (all of that family's then if ``Configuration/startsAllAtOnce``); at most
/// ``Configuration/workers`` decode at once, over all families, and idle ones are reused across
/// files (no process per file). The parent opens each file and passes the descriptor; the worker
/// answers with the downscaled pixels and the header's metadata, which the parent checks against
/// the box before it allocates for them. A worker that fails is killed and replaced.
package final class WorkerPool: ImageDecoding {
    package struct Configuration: Sendable, Hashable {
        /// One worker program for every family (it must link every decoder); nil:
        /// `$THUMBCACHE_WORKER`, else each family's program (``WorkerFamily/executableName``)
        /// beside this process's executable, else on `PATH`.
        package var executable: String?
        package var workers: Int
        /// Wall-clock seconds per file before its worker is killed.
        package var timeout: Double
        /// Address space per worker, in bytes.
        package var memoryLimit: Int
        /// CPU seconds per worker before the kernel stops it: a backstop behind `timeout`.
        package var cpuSeconds: Int
        /// Files a worker decodes before it is replaced (bounds what a leak can grow to).
        package var filesPerWorker: Int
        /// A family's first file starts every worker of that family: each loads its libraries
        /// while that file decodes, instead of when the next thread comes with a file (for batches).
        package var startsAllAtOnce: Bool
        /// Threads one decode may use (a HEIF grid's tiles decode side by side): the cores left to
        /// each of `workers` decodes running at once, so a one-file `get` uses them all and a warm
        /// of one decode per core adds none.
        package var decodeThreads: Int
        /// Seconds a worker may stay idle before it is ended (the next file of its family starts
        /// another); nil keeps idle workers until ``close()``. A pool may live for hours (a
        /// watcher, a server, an app's generator), and each family's worker holds 13 to 40 MB.
        package var idleExit: Double?
        /// Workers run at idle CPU and I/O priority (nice 19, the idle I/O class): for background
        /// work in a process that also answers people (the daemon's watching).
        package var idlePriority: Bool
        /// Workers confine themselves without Landlock, as on a kernel that has none: every open
        /// is then refused, and what a decoder loads later is loaded before the confinement
        /// (SECURITY.md). Stricter, not looser; for the tests of that path.
        package var withoutLandlock = false
        /// The families this program decodes itself, whose workers it forks while it has one thread
        /// (``WorkerFork``); nil: every family's program is spawned.
        package var fork: WorkerFork?

        package init(executable: String? = nil, workers: Int, timeout: Double = 20, memoryLimit: Int = 1 << 30,
                     cpuSeconds: Int = 3600, filesPerWorker: Int = 10_000, startsAllAtOnce: Bool = false, decodeThreads: Int? = nil,
                     idleExit: Double? = nil, idlePriority: Bool = false) {
            self.idlePriority = idlePriority
            self.executable = executable
            self.workers = max(1, workers)
            self.timeout = timeout
            self.memoryLimit = memoryLimit
            self.cpuSeconds = cpuSeconds
            self.filesPerWorker = filesPerWorker
            self.startsAllAtOnce = startsAllAtOnce
            self.decodeThreads = max(1, decodeThreads ?? sysconf(Int32(_SC_NPROCESSORS_ONLN)) / self.workers)
            self.idleExit = idleExit
        }
    }

    package let configuration: Configuration
    private struct State {
        var idle: [WorkerFamily: [WorkerProcess]] = [:]
        /// Workers checked out, over all families.
        var running = 0
        var started = 0
        var familiesStarted: Set<WorkerFamily> = []
        /// Workers alive or starting, per family: what ``Configuration/startsAllAtOnce`` tops up
        /// to `workers`, so that threads starting a family together do not start it twice.
        var live: [WorkerFamily: Int] = [:]
        /// A thread is ending workers idle past ``Configuration/idleExit``.
        var reaping = false
    }
    private let state = ConditionLockedState(State())

    package init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    deinit { close() }

    /// Ends every idle worker (each exits when its channel closes); later calls start new ones.
    package func close() {
        let idle = takeIdleWorkers()
        // All are told first, so that they exit side by side rather than one after another.
        for worker in idle { worker.hangUp() }
        for worker in idle { worker.finish(kill: false) }
    }

    /// Closes each idle worker's channel and forgets it without waiting for it to end: for a
    /// process that exits next (a one-file `get`), whose ended children the system reaps. Saves
    /// the wait for a worker's exit, which the output need not wait for.
    package func hangUpIdleWorkers() {
        for worker in takeIdleWorkers() { worker.abandon() }
    }

    /// The idle workers, no longer the pool's.
    private func takeIdleWorkers() -> [WorkerProcess] {
        state.withLock { s in
            defer {
                for (family, workers) in s.idle { s.live[family, default: 0] -= workers.count }
                s.idle = [:]
            }
            return Array(s.idle.values.joined())
        }
    }

    /// How many worker processes this pool has started.
    package var workersStarted: Int { state.withLock { $0.started } }

    /// How many workers are idle, over all families.
    package var idleWorkers: Int { state.withLock { $0.idle.values.reduce(0) { $0 + $1.count } } }

    /// The idle workers' process identifiers, to look into them (/proc).
    package var idleWorkerIdentifiers: [pid_t] { state.withLock { $0.idle.values.flatMap { $0.map(\.pid) } } }

    /// The families whose workers this pool has started.
    package var familiesStarted: Set<WorkerFamily> { state.withLock { $0.familiesStarted } }

    /// Starts the worker for `format`, which the file's first bytes name, so that its start (its
    /// family's libraries loaded, its confinement) overlaps what the caller does before asking: a
    /// process made for one file pays it in parallel. A family this program forks is forked now,
    /// on the caller's thread while it is the only one; another's program is spawned from a thread
    /// of its own. Nothing when a worker of that family is alive or starting.
    package func prepare(forFileAt path: String, format: ImageFormat) {
        let family = WorkerFamily(format)
        let starts = state.withLock { s -> Bool in
            guard s.live[family, default: 0] == 0, s.idle[family]?.isEmpty != false else { return false }
            s.live[family, default: 0] += 1
            return true
        }
        guard starts else { return }
        if let fork = configuration.fork, fork.forks(family) {
            let worker = try? forkWorker(fork, family: family, expecting: format)
            state.withLock { s in
                if let worker { s.idle[family, default: []].append(worker) } else { s.live[family, default: 0] -= 1 }
            }
            return
        }
        guard let executable = try? locateExecutable(family) else {
            state.withLock { $0.live[family, default: 0] -= 1 }
            return
        }
        pthread_detach(startThread { [self] in startIdle(1, family: family, executable: executable, expecting: format) })
    }

    /// How a worker of `family` is confined (the layers its hello named) and whether it was
    /// forked from this process: a worker is checked out (started if none is idle) and back.
    package func confinement(of family: WorkerFamily) throws -> (layers: [String], forked: Bool) {
        let path = "(\(family.rawValue) worker)"
        let worker = try checkOut(family, path: path)
        do throws(WorkerFailure.Reason) {
            try worker.readHello()
        } catch {
            throw WorkerFailure(path: path, reason: discard(worker, after: error))
        }
        defer { checkIn(worker) }
        return (worker.layers, worker.forked)
    }

    /// `format` if it is one the worker cannot tell from bytes (text): no magic, no sniffer.
    static func fallback(_ format: ImageFormat?) -> String? { FormatCatalogue.unnamedByBytes(format)?.rawValue }

    /// The family whose worker decodes the file on `fd`: the format's when its bytes named it,
    /// else what the first bytes say (bytes win, as in the worker), else the format's (text).
    static func family(of fd: Int32, path: String, format: ImageFormat?) -> WorkerFamily {
        if let format, fallback(format) == nil { return WorkerFamily(format) }
        return WorkerFamily(ImageDecoders.catalogue.format(ofDescriptor: fd, name: path) ?? format)
    }

    // MARK: Running a request

    /// Opens the file, has a worker decode it, and turns every way that can fail into an error
    /// naming the path: the decoder's own (``ImagingError``) or the worker's (``WorkerFailure``).
    func run(_ request: WorkerRequest, format: ImageFormat?, maxPixelBytes: Int) throws -> WorkerAnswer {
        let path = request.name
        let fd: Int32
        switch retryingInterrupts({ open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }) {
        case .success(let opened): fd = opened
        case .failure(let errno): throw ImagingError(path: path, reason: .unreadable(errno.description))
        }
        defer { Glibc.close(fd) }
        var family = Self.family(of: fd, path: path, format: format)
        while true {
            let worker = try checkOut(family, path: path, expecting: format)
            let deadline = MonotonicClock.nanoseconds() + UInt64(configuration.timeout * 1e9)
            do {
                let answer = try worker.call(request, file: fd, deadline: deadline, maxPixelBytes: maxPixelBytes)
                let reply = answer.reply
                worker.served += 1
                checkIn(worker)
                // A worker that leaves the file to a family it may hand on to (a HEIF for libheif)
                // is followed (once: no such family hands on again); the next worker reads the
                // file from its start again.
                if case .decodedElsewhere(let name)? = reply.error?.reason, let next = WorkerFamily(rawValue: name),
                   family.mayHandOnTo.contains(next) {
                    family = next
                    lseek(fd, 0, SEEK_SET)
                    continue
                }
                if let error = reply.error { throw ImagingError(path: path, reason: error.reason) }
                return answer
            } catch let error as ImagingError {
                throw error
            } catch {
                throw WorkerFailure(path: path, reason: discard(worker, after: error))
            }
        }
    }

    /// Ends a worker that failed and says why, from how it ended.
    private func discard(_ worker: WorkerProcess, after error: any Error) -> WorkerFailure.Reason {
        defer {
            state.withLock { s in
                s.running -= 1
                s.live[worker.family, default: 0] -= 1
            }
        }
        switch error {
        case WorkerChannel.Failure.timedOut:
            worker.finish(kill: true)
            return .timedOut(seconds: configuration.timeout)
        case let reason as WorkerFailure.Reason:
            worker.finish(kill: true)
            return reason
        case is WorkerChannel.Failure:
            let status = worker.reapAfterBreak()
            return Self.reason(status: status, standardError: worker.standardError(), memoryLimit: configuration.memoryLimit)
        default:
            worker.finish(kill: true)
            return .protocolViolation("\(error)")
        }
    }

    /// How a worker that died while decoding ended, in words.
    static func reason(status: Int32, standardError: String, memoryLimit: Int) -> WorkerFailure.Reason {
        let signal = status & 0x7F
        if signal == 0 { return .exited(status: (status >> 8) & 0xFF) }
        // The pool sends SIGKILL only after a timeout, which is reported as such.
        if signal == SIGKILL { return .killed(signal: signal) }
        // An allocation past RLIMIT_AS fails, and the runtime or the C library says so as it aborts.
        let text = standardError.lowercased()
        if text.contains("allocate") || text.contains("out of memory") { return .exceededMemory(bytes: memoryLimit) }
        return .crashed(signal: signal)
    }

    private func checkOut(_ family: WorkerFamily, path: String, expecting format: ImageFormat? = nil) throws -> WorkerProcess {
        // A family with all its workers alive or starting (another thread may be starting them
        // into the idle list right now) waits for one of them instead of starting one more.
        let workers = configuration.workers
        let reuse: WorkerProcess? = state.withLock(waitingUntil: {
            $0.idle[family]?.isEmpty == false || $0.running < workers && $0.live[family, default: 0] < workers
        }) { s in
            s.running += 1
            if let idle = s.idle[family]?.popLast() { return idle }
            s.live[family, default: 0] += 1
            return nil
        }
        if let reuse { return reuse }
        do {
            if let fork = configuration.fork, fork.forks(family) { return try forkWorker(fork, family: family, expecting: format) }
            let executable = try locateExecutable(family)
            let worker = try spawn(family, executable: executable, expecting: format)
            let more = state.withLock { s in
                s.started += 1
                s.familiesStarted.insert(family)
                let more = configuration.startsAllAtOnce ? max(0, configuration.workers - s.live[family, default: 0]) : 0
                s.live[family, default: 0] += more
                return more
            }
            // On a thread of their own: the first file decodes meanwhile, instead of waiting for
            // each of the others to start and say hello in turn.
            if more > 0 { pthread_detach(startThread { [self] in startIdle(more, family: family, executable: executable) }) }
            return worker
        } catch {
            state.withLock { s in
                s.running -= 1
                s.live[family, default: 0] -= 1
            }
            throw WorkerFailure(path: path, reason: error)
        }
    }

    /// Starts `count` workers (already counted live) into the family's idle list; one that cannot
    /// start is left to a later checkout.
    private func startIdle(_ count: Int, family: WorkerFamily, executable: String, expecting format: ImageFormat? = nil) {
        for started in 0..<count {
            guard let worker = try? spawn(family, executable: executable, expecting: started == 0 ? format : nil) else {
                state.withLock { $0.live[family, default: 0] -= count - started }
                return
            }
            state.withLock { s in
                s.started += 1
                s.idle[family, default: []].append(worker)
            }
        }
    }

    /// A worker of `family` forked from this program (``WorkerFork``), counted as started.
    private func forkWorker(_ fork: WorkerFork, family: WorkerFamily, expecting format: ImageFormat?) throws(WorkerFailure.Reason) -> WorkerProcess {
        let worker = try WorkerProcess.fork(configuration, fork, family: family, expecting: format)
        state.withLock { s in
            s.started += 1
            s.familiesStarted.insert(family)
        }
        return worker
    }

    /// A worker of `family` from `executable`. A batch pool's is heard from before use (its first
    /// before the rest of its family start and race it); a one-file call's request goes first.
    private func spawn(_ family: WorkerFamily, executable: String, expecting format: ImageFormat? = nil) throws(WorkerFailure.Reason) -> WorkerProcess {
        let worker = try WorkerProcess.spawn(configuration, family: family, executable: executable, expecting: format)
        if configuration.startsAllAtOnce { try worker.readHello() }
        return worker
    }

    private func checkIn(_ worker: WorkerProcess) {
        if worker.served >= configuration.filesPerWorker {
            state.withLock { s in
                s.running -= 1
                s.live[worker.family, default: 0] -= 1
            }
            worker.finish(kill: false)
            return
        }
        let startsReaper = state.withLock { s in
            s.running -= 1
            worker.idleSince = MonotonicClock.nanoseconds()
            s.idle[worker.family, default: []].append(worker)
            guard configuration.idleExit != nil, !s.reaping else { return false }
            s.reaping = true
            return true
        }
        if startsReaper, let idleExit = configuration.idleExit {
            // The pool is held weakly: it may go (and close its workers) while the thread sleeps.
            let limit = UInt64(idleExit * 1e9)
            pthread_detach(startThread { [weak self] in
                while let wake = self?.endWorkers(idleFor: limit) {
                    let now = MonotonicClock.nanoseconds()
                    if wake > now { usleep(UInt32(clamping: (wake - now) / 1000 + 1)) }
                }
            })
        }
    }

    /// Ends the workers idle for `limit` nanoseconds or more; returns when the next idle one will
    /// be, or nil (and the reaper stops) when none is left.
    private func endWorkers(idleFor limit: UInt64) -> UInt64? {
        var expired: [WorkerProcess] = []
        let next = state.withLock { s -> UInt64? in
            let now = MonotonicClock.nanoseconds()  // under the lock: no check-in is later
            var next: UInt64?
            for (family, workers) in s.idle {
                let (old, young) = (workers.filter { now - $0.idleSince >= limit }, workers.filter { now - $0.idleSince < limit })
                s.idle[family] = young
                s.live[family, default: 0] -= old.count
                expired += old
                if let first = young.map({ $0.idleSince + limit }).min() { next = min(next ?? first, first) }
            }
            if next == nil { s.reaping = false }
            return next
        }
        for worker in expired { worker.hangUp() }
        for worker in expired { worker.finish(kill: false) }
        return next
    }
}
