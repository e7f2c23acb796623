import FoundationEssentials
import Glibc
import ThumbcacheIndex
import ThumbcacheStore
import ThumbcacheSync
import ThumbcacheWorker

/// Keeps the cache, the metadata index and (if asked) the standard thumbnails in step with
/// trees as they change (`thumbcache watch`): inotify events, debounced into batches; new and
/// changed files warmed, moves kept as moves, deletions removed, an overflow answered by a
/// rescan. Blocks in `poll` while nothing changes.
package final class LiveUpdater: Sendable {
    package struct Options: Sendable {
        /// How a batch is warmed (its index, its freedesktop export, jobs, isolation).
        package var warm: Warmer.Options
        /// A batch ends this long after its last event…
        package var quiet: Double
        /// …or this long after its first, whichever comes first.
        package var maxDelay: Double
        /// Watch at most this many directories; the rest are rescanned every `rescanInterval`.
        package var maxWatches: Int?
        package var rescanInterval: Double
        /// Warm the trees once before watching them.
        package var initialWarm: Bool
        /// After a batch the cache or index could not take (a full file system), the trees are
        /// warmed again this long after, then twice as long after each failure, up to a minute.
        package var retryDelay: Double

        package init(warm: Warmer.Options = .init(), quiet: Double = 0.15, maxDelay: Double = 1, maxWatches: Int? = nil,
                    rescanInterval: Double = 60, initialWarm: Bool = true, retryDelay: Double = 5) {
            self.retryDelay = retryDelay
            self.warm = warm
            self.quiet = quiet
            self.maxDelay = maxDelay
            self.maxWatches = maxWatches
            self.rescanInterval = rescanInterval
            self.initialWarm = initialWarm
        }
    }

    /// What one batch did.
    package struct Batch: Sendable, Codable {
        package var files = 0
        package var directories = 0
        package var moved = 0
        package var removed = 0
        /// The whole trees were warmed again (at start, after an overflow, or for unwatched directories).
        package var rescanned = false
        /// Directories not watched (past the watch limit): rescanned periodically.
        package var unwatched = 0
        package var seconds = 0.0
        package var warm: WarmSummary?
        /// Something to tell the user once (the watch limit reached).
        package var message: String?
    }

    private let roots: [String]
    private let options: Options
    private let warmer: Warmer
    private let operations: StandardCacheOperations
    private let stopPipe: [Int32]

    /// - Parameters: as ``Warmer``'s; `roots` are watched recursively.
    package init(roots: [String], store: ThumbnailStore, providers: [any ThumbnailProvider] = [ImageThumbnailProvider()],
                types: ContentTypeRegistry = ContentTypeRegistry(), options: Options = Options()) throws {
        self.roots = roots.map { FilePaths.resolved($0) }
        self.options = options
        let decoding = options.warm.isolation.makeDecoding(defaultWorkers: options.warm.jobs)
        warmer = Warmer(factory: ThumbnailFactory(store: store, types: types, providers: providers), sharedDecoding: decoding)
        operations = StandardCacheOperations(cache: options.warm.freedesktop?.cache ?? FreedesktopThumbnailCache(), store: store,
                                             index: options.warm.index, types: types, decoding: decoding)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw FileError(path: "pipe", reason: .system(operation: "pipe", Errno.current)) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        stopPipe = fds
    }

    deinit { stopPipe.forEach { close($0) } }

    /// Ends ``run(_:)`` after its current batch (from any thread, a signal handler's queue included).
    package func stop() {
        var byte: UInt8 = 1
        _ = write(stopPipe[1], &byte, 1)
    }

    /// Watches until ``stop()``; `report` is called after each batch.
    package func run(_ report: (Batch) -> Void) async throws {
        let watcher = try DirectoryWatcher(maxWatches: options.maxWatches)
        let excluded = Set(options.warm.cacheDirectories(warmer.store))
        for root in roots { watcher.add(tree: root, excluding: excluded) }
        var told = false
        var retry = RetrySchedule(firstDelay: options.retryDelay)
        /// `wholeTrees`: the batch warmed the roots, so it caught up whatever a failed write lost.
        func finish(_ batch: inout Batch, since start: UInt64, wholeTrees: Bool = false) {
            batch.unwatched = watcher.unwatched.count
            if !told, let message = watcher.limitMessage {
                batch.message = message
                told = true
            }
            if let summary = batch.warm, let message = retry.note(summary, wholeTrees: wholeTrees, store: warmer.store.directory) {
                batch.message = message
            }
            batch.seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
            report(batch)
        }
        if options.initialWarm {
            let start = MonotonicClock.nanoseconds()
            var batch = Batch(rescanned: true)
            batch.warm = await warmer.warm(roots, options: options.warm)
            finish(&batch, since: start)
        }
        while true {
            // The trees again when a write failed: due even while events keep coming.
            if let due = retry.due, MonotonicClock.nanoseconds() >= due {
                let start = MonotonicClock.nanoseconds()
                var batch = Batch(rescanned: true)
                batch.warm = await warmer.warm(roots, options: options.warm)
                finish(&batch, since: start, wholeTrees: true)
                continue
            }
            // Unwatched directories: looked at again on a timer, the watched ones never.
            var timeout = watcher.unwatched.isEmpty ? -1 : Int32(options.rescanInterval * 1000)
            for due in [retry.due, watcher.pairingDeadline].compactMap({ $0 }) {
                // Rounded up: poll would otherwise wake a little before it is due.
                let left = Int32(clamping: (Int64(due) - Int64(MonotonicClock.nanoseconds()) + 999_999) / 1_000_000)
                timeout = max(0, timeout < 0 ? left : min(timeout, left))
            }
            switch wait(watcher.descriptor, timeout: timeout) {
            case .stop: return
            case .timeout:
                // A move's first half whose second never came: a move out of the trees, applied now.
                if let due = watcher.pairingDeadline, MonotonicClock.nanoseconds() >= due {
                    let start = MonotonicClock.nanoseconds()
                    var batch = await apply(watcher.take())
                    finish(&batch, since: start, wholeTrees: batch.rescanned)
                    continue
                }
                // A retry is taken at the loop's top (poll may wake a little before it is due).
                if retry.due != nil && watcher.unwatched.isEmpty { continue }
                if let due = retry.due, MonotonicClock.nanoseconds() >= due { continue }
                let start = MonotonicClock.nanoseconds()
                var batch = Batch(rescanned: true)
                batch.warm = await warmer.warm(watcher.unwatched, options: options.warm)
                finish(&batch, since: start)
                continue
            case .ready: break
            }
            let first = MonotonicClock.nanoseconds()
            watcher.read()
            // Debounce: until quiet, or at most maxDelay after the first event.
            while Double(MonotonicClock.nanoseconds() - first) / 1e9 < options.maxDelay {
                guard case .ready = wait(watcher.descriptor, timeout: Int32(options.quiet * 1000)) else { break }
                watcher.read()
            }
            let start = MonotonicClock.nanoseconds()
            var batch = await apply(watcher.take())
            finish(&batch, since: start, wholeTrees: batch.rescanned)
        }
    }

    private enum Wake { case ready, timeout, stop }

    private func wait(_ fd: Int32, timeout: Int32) -> Wake {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe[0], events: Int16(POLLIN), revents: 0)]
        while true {
            let n = poll(&fds, 2, timeout)
            if n < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 { return .stop }
            return n > 0 ? .ready : .timeout
        }
    }

    /// Applies one batch of changes.
    private func apply(_ changes: [DirectoryWatcher.Change]) async -> Batch {
        var batch = Batch()
        var warm: [String] = []
        var moves: [(String, String)] = []
        var removedFiles: [String] = []
        var removedDirectories: [String] = []
        var movedDirectories: [String] = []
        for change in changes {
            switch change {
            case .overflow: batch.rescanned = true
            case .file(let path):
                batch.files += 1
                warm.append(path)
            case .directory(let path):
                batch.directories += 1
                warm.append(path)
            case .moved(let from, let to, let isDirectory):
                batch.moved += 1
                if isDirectory {
                    movedDirectories.append(from)
                    moves += Self.files(under: to).map { (from + $0.dropFirst(to.count), $0) }
                } else {
                    moves.append((from, to))
                }
            case .removed(let path, let isDirectory):
                batch.removed += 1
                if isDirectory { removedDirectories.append(path) } else { removedFiles.append(path) }
            }
        }
        // A move or removal the cache or index refused (a full disk) is a failed write like a
        // warm's: the retry's warm of the trees settles it (a deleted file stayed indexed).
        var refused: [String] = []
        if !moves.isEmpty {
            operations.move(from: moves.map { FileURI.of(path: $0.0) }, to: moves.map { FileURI.of(path: $0.1) }) { refused.append($0) }
        }
        if !removedFiles.isEmpty { operations.delete(removedFiles.map { FileURI.of(path: $0) }) { refused.append($0) } }
        func dropMissing(under directories: [String]) {
            guard !directories.isEmpty else { return }
            do {
                _ = try options.warm.index?.removeMissingFiles(under: directories)
            } catch {
                refused.append(error.description)
            }
        }
        dropMissing(under: removedDirectories)
        // Files moved or created then changed in the same batch: warming what exists now settles them.
        if batch.rescanned {
            batch.warm = await warmer.warm(roots, options: options.warm)
        } else {
            let existing = Array(Set(warm + moves.map(\.1))).filter { FileManager.default.fileExists(atPath: $0) }.sorted()
            if !existing.isEmpty { batch.warm = await warmer.warm(existing, options: options.warm) }
        }
        // What is still indexed at a move's old place goes: an item a warm in flight wrote there
        // as its directory was renamed, which neither the move nor the new path's warm carried
        // (the soak found one, a moved directory's file at its old path).
        let left = moves.map(\.0).filter { !FileManager.default.fileExists(atPath: $0) }
        if !left.isEmpty { operations.delete(left.map { FileURI.of(path: $0) }) { refused.append($0) } }
        dropMissing(under: movedDirectories)
        if !refused.isEmpty {
            var summary = batch.warm ?? WarmSummary(seen: 0, generated: 0, alreadyCached: 0, sameContentAsAnother: 0, notSupported: 0,
                                                    failures: [:], elapsedSeconds: 0)
            summary.cacheWriteFailures += refused.filter { !summary.cacheWriteFailures.contains($0) }
            batch.warm = summary
        }
        return batch
    }

    private static func files(under dir: String) -> [String] {
        var out: [String] = []
        DirectoryWalker().walk([dir]) { if case .file(let path, _) = $0 { out.append(path) } }
        return out
    }
}

/// When `watch` warms its trees again after a batch it could not finish: a write the cache or
/// the index refused (a full disk), said once per episode, retried after 5 s, then twice as
/// long after each failed retry, up to a minute; or a file whose worker was killed from outside.
struct RetrySchedule {
    let firstDelay: Double
    private var pending: (at: UInt64, delay: Double, said: Bool)?

    init(firstDelay: Double) { self.firstDelay = firstDelay }

    /// When the trees are to be warmed again (monotonic nanoseconds), if they are.
    var due: UInt64? { pending?.at }

    /// Takes a batch's outcome (`wholeTrees`: it warmed the roots) and returns what to tell the
    /// user, if anything.
    mutating func note(_ summary: WarmSummary, wholeTrees: Bool, store: String) -> String? {
        let now = MonotonicClock.nanoseconds()
        func at(_ delay: Double) -> UInt64 { now + UInt64(delay * 1e9) }
        if summary.couldNotWrite {
            let reason = (summary.cacheWriteFailures + (summary.index?.errors ?? [])).first ?? "a write failed"
            // Said once per episode, not at every retry.
            let message = pending?.said == true ? nil : "could not write the cache at \(store): \(reason); changes are kept and the "
                + "trees warmed again every \(Int(firstDelay)) s or more until it can (free some space there)"
            if let current = pending {
                // A failed retry waits twice as long; a batch of events failing meanwhile leaves it.
                if wholeTrees { pending = (at(min(60, current.delay * 2)), min(60, current.delay * 2), true) }
                pending?.said = true
            } else {
                pending = (at(firstDelay), firstDelay, true)
            }
            return message
        }
        if summary.transientFailures > 0, pending == nil || wholeTrees {
            let delay = pending.map { min(60, $0.delay * 2) } ?? firstDelay
            pending = (at(delay), delay, pending?.said ?? false)
            return nil
        }
        guard wholeTrees, let current = pending else { return nil }
        pending = nil
        return current.said ? "the cache takes writes again: caught up" : nil
    }
}

