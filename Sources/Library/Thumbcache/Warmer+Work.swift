import Synchronization
import ThumbcacheStore
import ThumbcacheSync
import ThumbcacheWorker

/// A warm's worker threads: what they share and how each takes its files.
extension Warmer {
    /// What every file of one warm shares, held by reference: ``Options`` is several hundred
    /// bytes, and its copies, several a file, were a twentieth of a re-warm.
    final class Run: Sendable {
        let options: Options
        let factory: ThumbnailFactory
        let decoding: any ImageDecoding
        let tally: Tally
        let feeder: IndexFeeder?
        /// The store's removal count as the warm began (nil: unreadable, nothing is vouched).
        let removals: UInt64?

        init(options: Options, factory: ThumbnailFactory, decoding: any ImageDecoding, tally: Tally, feeder: IndexFeeder?, removals: UInt64?) {
            self.options = options
            self.factory = factory
            self.decoding = decoding
            self.tally = tally
            self.feeder = feeder
            self.removals = removals
        }
    }

    /// Worker `worker`'s loop: its files from `queue`, each identified, processed and committed.
    static func work(_ worker: Int, queue: SharedWork<(path: String, snapshot: FileSnapshot?)>, run: Run, committer: FileCommitter) {
        let hasher = run.factory.store.hasher()
        guard let remote = run.options.remote else {
            // Several files at once while they go quickly: on a re-warm a file costs a few microseconds.
            while case let files = queue.take(for: worker), !files.isEmpty {
                for file in files {
                    let known = identify(file.path, snapshot: file.snapshot, factory: run.factory, hasher: hasher)
                    committer.commit(file.path, process(known, run))
                }
            }
            return
        }
        // With a remote tier, a few files at a time: identified first, their keys asked in one
        // batch (one round trip instead of one a file), then made.
        while case let files = queue.next(for: worker, upTo: lookupBatch), !files.isEmpty {
            let identified = files.map { identify($0.path, snapshot: $0.snapshot, factory: run.factory, hasher: hasher) }
            let prefetched = lookUp(identified, remote: remote, factory: run.factory, decoding: run.decoding, options: run.options)
            for (file, known) in zip(files, identified) {
                committer.commit(file.path, process(known, run, prefetched: prefetched))
            }
        }
    }
}

/// Thread-safe counters for a warm.
final class Tally: Sendable {
    private struct State {
        var generated = 0
        var fetched = 0
        var alreadyCached = 0
        var duplicates = 0
        var notSupported = 0
        var contents: Set<ContentHash> = []
        var failures: [String: [String]] = [:]
        var failed = 0
        var transient = 0
        var found = 0
        var outsideShard = 0
        var specialFiles = 0
        var walkComplete = false
        var unwritten: [String] = []
        var files: Int { generated + fetched + alreadyCached + duplicates + notSupported + failed }
    }
    private let state = Mutex(State())
    private let start = MonotonicClock.nanoseconds()

    func found(_ count: Int = 1) { state.withLock { $0.found += count } }
    func outsideShard() { state.withLock { $0.outsideShard += 1 } }
    func specialFile() { state.withLock { $0.specialFiles += 1 } }
    func walkFinished() { state.withLock { $0.walkComplete = true } }

    /// True the first time `content` is claimed in this run.
    func claim(_ content: ContentHash) -> Bool {
        state.withLock { $0.contents.insert(content).inserted }
    }

    /// Whether `content` was claimed in this run (a re-warm claims none: nothing is hashed then).
    func claimed(_ content: ContentHash) -> Bool {
        state.withLock { !$0.contents.isEmpty && $0.contents.contains(content) }
    }

    @discardableResult
    func record(_ outcome: Warmer.Outcome) -> WarmProgress {
        state.withLock { s in
            switch outcome {
            case .generated: s.generated += 1
            case .fetched: s.fetched += 1
            case .alreadyCached: s.alreadyCached += 1
            case .sameContentAsAnother: s.duplicates += 1
            case .notSupported: s.notSupported += 1
            case .failed(let path, let reason, let transient):
                s.failed += 1
                if transient { s.transient += 1 }
                s.failures[reason, default: []].append(path)
            }
            return WarmProgress(files: s.files, failed: s.failed, found: s.found, walkComplete: s.walkComplete,
                                elapsed: Int64(MonotonicClock.nanoseconds() - start))
        }
    }

    /// Why the cache could not be written, each reason once.
    func couldNotWrite(_ reason: String) {
        state.withLock { s in if !s.unwritten.contains(reason) { s.unwritten.append(reason) } }
    }

    /// A file counted as `outcome` whose records then failed to commit: it is failed instead.
    func reclassify(_ outcome: Warmer.Outcome, asFailed path: String, reason: String) {
        state.withLock { s in
            if !s.unwritten.contains(reason) { s.unwritten.append(reason) }
            switch outcome {
            case .generated: s.generated -= 1
            case .fetched: s.fetched -= 1
            case .alreadyCached: s.alreadyCached -= 1
            case .sameContentAsAnother: s.duplicates -= 1
            case .notSupported: s.notSupported -= 1
            case .failed:
                // Already failed (its failure record did not commit): keep the one entry it has.
                return
            }
            s.failed += 1
            s.failures[reason, default: []].append(path)
        }
    }

    func summary(elapsed: Int64) -> WarmSummary {
        state.withLock { s in
            WarmSummary(seen: s.files, outsideShard: s.outsideShard, specialFiles: s.specialFiles, generated: s.generated, fetched: s.fetched, alreadyCached: s.alreadyCached,
                        sameContentAsAnother: s.duplicates,
                        notSupported: s.notSupported, failures: s.failures.mapValues { $0.sorted() },
                        elapsedSeconds: Double(elapsed) / 1e9, cacheWriteFailures: s.unwritten, transientFailures: s.transient)
        }
    }
}
