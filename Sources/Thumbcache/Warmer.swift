import Foundation
import ThumbcacheStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Precomputes what the cache knows about every file under some directories.
///
/// Files are walked on one task, identified (stat cache, else hashed) by `jobs` parallel
/// workers, and recorded through one ``GroupCommitWriter``. A file that cannot be read is a
/// per-file failure in the summary; the run goes on.
public final class Warmer: Sendable {
    public struct Options: Sendable {
        public var jobs: Int
        public var followSymbolicLinks: Bool

        public init(jobs: Int = Warmer.defaultJobs, followSymbolicLinks: Bool = false) {
            self.jobs = max(1, jobs)
            self.followSymbolicLinks = followSymbolicLinks
        }
    }

    /// One worker per core.
    public static var defaultJobs: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    public let store: ThumbnailStore

    public init(store: ThumbnailStore) {
        self.store = store
    }

    /// Warms `roots`; `progress` is called from worker threads after each file.
    ///
    /// The walker and the workers run on threads of their own, not on Swift's cooperative pool:
    /// they block in system calls and on each other.
    public func warm(
        _ roots: [String], options: Options = Options(), progress: (@Sendable (WarmProgress) -> Void)? = nil
    ) async -> WarmSummary {
        let start = StoreClock.nowNanoseconds()
        let writer = GroupCommitWriter(store: store)
        let walker = DirectoryWalker(followSymbolicLinks: options.followSymbolicLinks, excluding: [store.directory])
        let queue = WorkQueue<String>(capacity: 4096)
        let tally = Tally()
        let inFlight = DispatchSemaphore(value: 1024)
        let store = self.store
        let threads = DispatchGroup()

        DispatchQueue.global().async(group: threads) {
            walker.walk(roots) { entry in
                switch entry {
                case .file(let path): queue.push(path)
                case .failure(let error): tally.record(.failed(error.path, error.reason.description))
                }
            }
            queue.finish()
        }
        for _ in 0..<options.jobs {
            let thread = Thread {
                let hasher = ContentHasher()
                while let path = queue.pop() {
                    let outcome = Self.identify(path, store: store, hasher: hasher)
                    if case .hashed(let id) = outcome {
                        inFlight.wait()
                        writer.enqueue([.file(path: path, snapshot: id.snapshot, content: id.content)]) { result in
                            if case .failure(let error) = result { tally.record(.failed(path, error.description)) }
                            inFlight.signal()
                        }
                    }
                    let snapshot = tally.record(outcome)
                    progress?(snapshot)
                }
                threads.leave()
            }
            threads.enter()
            thread.start()
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            threads.notify(queue: .global()) { done.resume() }
        }
        let failures = await writer.flush()
        for failure in failures { tally.record(.failed(store.directory, failure.description)) }
        writer.close()
        return tally.summary(elapsed: StoreClock.nowNanoseconds() - start)
    }

    private static func identify(_ path: String, store: ThumbnailStore, hasher: ContentHasher) -> Outcome {
        do {
            let id = try store.identify(fileAt: path, hasher: hasher)
            return id.fromCache ? .unchanged : .hashed(id)
        } catch let error as FileError {
            return .failed(error.path, error.reason.description)
        } catch {
            return .failed(path, "\(error)")
        }
    }

    enum Outcome {
        case unchanged
        case hashed(FileIdentity)
        case failed(String, String)
    }
}

/// Counts as a warm goes.
public struct WarmProgress: Sendable {
    public var files: Int
    public var failed: Int
    /// Nanoseconds since the warm started.
    public var elapsed: Int64
}

/// What a warm did.
public struct WarmSummary: Sendable, Codable, Hashable {
    /// Regular files found.
    public var seen: Int
    /// Files read and hashed (new or changed).
    public var hashed: Int
    /// Files the stat cache already knew unchanged: not read at all.
    public var unchanged: Int
    /// Hashed files whose bytes equal another file's seen in this run.
    public var sameContentAsAnother: Int
    /// Paths that failed, grouped by reason.
    public var failures: [String: [String]]
    public var elapsedSeconds: Double

    public var failed: Int { failures.values.reduce(0) { $0 + $1.count } }
}

/// Thread-safe counters for a warm.
private final class Tally: Sendable {
    private struct State {
        var files = 0
        var hashed = 0
        var unchanged = 0
        var duplicates = 0
        var contents: Set<ContentHash> = []
        var failures: [String: [String]] = [:]
        var failed = 0
    }
    private let state = ConditionLockedState(State())
    private let start = StoreClock.nowNanoseconds()

    @discardableResult
    func record(_ outcome: Warmer.Outcome) -> WarmProgress {
        state.withLock { s in
            switch outcome {
            case .unchanged:
                s.files += 1
                s.unchanged += 1
            case .hashed(let id):
                s.files += 1
                s.hashed += 1
                if !s.contents.insert(id.content).inserted { s.duplicates += 1 }
            case .failed(let path, let reason):
                s.failed += 1
                s.failures[reason, default: []].append(path)
            }
            return WarmProgress(files: s.files, failed: s.failed, elapsed: StoreClock.nowNanoseconds() - start)
        }
    }

    func summary(elapsed: Int64) -> WarmSummary {
        state.withLock { s in
            WarmSummary(
                seen: s.files + s.failures.values.reduce(0) { $0 + $1.count }, hashed: s.hashed, unchanged: s.unchanged,
                sameContentAsAnother: s.duplicates, failures: s.failures.mapValues { $0.sorted() },
                elapsedSeconds: Double(elapsed) / 1e9)
        }
    }
}
