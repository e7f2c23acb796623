import Foundation
import Synchronization
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheRemote
import ThumbcacheStore
import ThumbcacheSync
import ThumbcacheWorker

/// Precomputes the cache for every file under some directories.
///
/// One walker thread and `jobs` worker threads (their own, not Swift's cooperative pool: they
/// block in system calls and on each other). A worker identifies a file (stat cache, else hash),
/// makes its thumbnails for every requested box if the cache lacks them, and hands the file's
/// records to one `GroupCommitWriter` as one atomic group. A file that fails is recorded (so
/// later warms skip it until the generator changes or `retryFailed`) and the run goes on.
public final class Warmer: Sendable {
    public struct Options: Sendable {
        public var jobs: Int
        public var followSymbolicLinks: Bool
        /// The thumbnails to make for each image (e.g. 256 px at scales 1 and 2).
        public var specs: [ThumbnailSpec]
        /// Try again files whose generation failed before.
        public var retryFailed: Bool
        /// Index every file walked (all types) into this metadata index, and drop indexed files
        /// under the roots that no longer exist.
        public var index: MetadataIndex?
        /// With an index: the most bytes of text read from each file for the full-text index
        /// (0: no words are read).
        public var textLimit = 1 << 20
        /// Where the built-in decoders run: sandboxed workers (the default, one per job) or this process.
        public var isolation: DecoderIsolation
        /// Also write the freedesktop standard's thumbnails (what file managers read), made from
        /// the stored ones; a spec for the largest size is added if none covers it.
        public var freedesktop: FreedesktopExport?
        /// Where valid standard thumbnails another program made stand in for a decode of the file.
        public var standardThumbnails: FreedesktopThumbnailCache?
        /// A shared tier asked before each decode; what is made here is queued and uploaded
        /// in the background (Docs/REMOTE.md).
        public var remote: RemoteCache?
        /// Wait at the end until the queued uploads are done (or the remote is unavailable);
        /// false leaves them for the next run.
        public var waitForUploads: Bool
        /// Warm only this share of the files (and leave the index's other files alone).
        public var shard: WarmShard?

        public init(jobs: Int = Warmer.defaultJobs, followSymbolicLinks: Bool = false,
                    specs: [ThumbnailSpec] = [ThumbnailSpec(size: 256)], retryFailed: Bool = false, index: MetadataIndex? = nil,
                    isolation: DecoderIsolation = .sandboxed, freedesktop: FreedesktopExport? = nil,
                    standardThumbnails: FreedesktopThumbnailCache? = nil, remote: RemoteCache? = nil, waitForUploads: Bool = true,
                    shard: WarmShard? = nil) {
            self.remote = remote
            self.shard = shard
            self.waitForUploads = waitForUploads
            self.isolation = isolation
            self.standardThumbnails = standardThumbnails
            self.jobs = max(1, jobs)
            self.followSymbolicLinks = followSymbolicLinks
            self.freedesktop = freedesktop
            var specs = specs
            if let needed = freedesktop?.sourceSpec,
                !specs.contains(where: { $0.variant(.thumbnail) == needed.variant(.thumbnail) && min($0.boxWidth, $0.boxHeight) >= needed.boxWidth })
            {
                specs.append(needed)
            }
            self.specs = specs.sorted { $0.boxWidth * $0.boxHeight > $1.boxWidth * $1.boxHeight }
            self.retryFailed = retryFailed
            self.index = index
        }

        /// What a walk never enters: thumbnails are not made of the caches, ours or the standard's.
        func cacheDirectories(_ store: ThumbnailStore) -> [String] {
            [store.directory, FreedesktopThumbnailCache.defaultDirectory] + (index.map { [$0.directory] } ?? [])
                + (freedesktop.map { [$0.cache.directory] } ?? [])
        }
    }

    /// Files handed from the walk to a worker at a time.
    static let handful = 32

    /// One job per core and one more: while a job's file passes between this process and its
    /// worker (the request, the pixels back, the PNG written), the extra one keeps the core
    /// busy (PERFORMANCE.md, "Small files").
    public static var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) + 1 }

    package let factory: ThumbnailFactory
    public var store: ThumbnailStore { factory.store }

    /// Decoders kept across warms (a watcher's many small ones); nil: a pool per warm.
    package let sharedDecoding: (any ImageDecoding)?

    package init(factory: ThumbnailFactory, sharedDecoding: (any ImageDecoding)? = nil) {
        self.factory = factory
        self.sharedDecoding = sharedDecoding
    }

    /// A warmer that makes thumbnails with `providers` (later ones win for the same type), as
    /// ``ThumbnailGenerator`` does.
    public convenience init(store: ThumbnailStore, providers: [any ThumbnailProvider] = [ImageThumbnailProvider()],
                            types: ContentTypeRegistry = ContentTypeRegistry()) {
        self.init(factory: ThumbnailFactory(store: store, types: types, providers: providers))
    }

    /// Warms `roots`; `progress` is called from worker threads after each file.
    public func warm(
        _ roots: [some FileLocation], options: Options = Options(), progress: (@Sendable (WarmProgress) -> Void)? = nil
    ) async -> WarmSummary {
        let start = MonotonicClock.nanoseconds()
        let store = self.store
        let factory = self.factory
        let writer = GroupCommitWriter(store: store)
        let walker = DirectoryWalker(followSymbolicLinks: options.followSymbolicLinks, excluding: options.cacheDirectories(store))
        let decoding = sharedDecoding ?? options.isolation.makeDecoding(defaultWorkers: options.jobs, forBatches: true)
        let feeder = options.index.map { IndexFeeder(index: $0, decoding: decoding, types: factory.types) }
        // Deep enough (a few MB of paths) that the walk of a typical tree finishes early, so the
        // progress line can show a total and an ETA; bounded, so a huge tree cannot grow it without end.
        // Files travel in handfuls: one hand-off between threads per file cost more than an
        // unchanged file's whole check on a tree of a million. A worker with nothing to do takes
        // half of what another has not started.
        let queue = SharedWork<(path: String, snapshot: FileSnapshot?)>(capacity: 65_536 / Self.handful, workers: options.jobs)
        let tally = Tally()
        let threads = DispatchGroup()
        let exporting = options.freedesktop.map { Exporting(FreedesktopExporter(export: $0, store: store), threads: options.jobs) }
        let uploader = options.remote.map { RemoteUploader(store: store, remote: $0) }
        let committer = FileCommitter(writer: writer, tally: tally, inFlight: DispatchSemaphore(value: 256), exporting: exporting,
                                      uploader: uploader, progress: progress)

        if options.retryFailed { _ = try? store.clearAllFailures() }
        // Absolute, canonical roots: the stat cache (and later the index) is keyed by path, so
        // `warm .` and `warm /home/me/Pictures` must name the same files the same way.
        let roots = roots.map { FilePaths.resolved($0.fileSystemPath) }
        threads.enter()
        Thread {
            Self.walk(roots, with: walker, into: queue, tally: tally, shard: options.shard)
            threads.leave()
        }.start()
        for worker in 0..<options.jobs {
            threads.enter()
            Thread {
                let hasher = factory.store.hasher()
                // With a remote tier, a few files at a time: identified first, their keys asked in
                // one batch (one round trip instead of one a file), then made.
                let batch = options.remote == nil ? 1 : Self.lookupBatch
                while case let files = queue.next(for: worker, upTo: batch), !files.isEmpty {
                    let identified = files.map { Self.identify($0.path, snapshot: $0.snapshot, factory: factory, hasher: hasher) }
                    let prefetched = options.remote.map {
                        Self.lookUp(identified, remote: $0, factory: factory, decoding: decoding, options: options)
                    }
                    for (file, known) in zip(files, identified) {
                        committer.commit(file.path, Self.process(known, factory: factory, decoding: decoding, options: options, tally: tally,
                                                                 feeder: feeder, prefetched: prefetched))
                    }
                }
                threads.leave()
            }.start()
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            threads.notify(queue: .global()) { done.resume() }
        }
        for failure in await writer.flush() {
            tally.record(.failed(store.directory, failure.description))
            tally.couldNotWrite(failure.description)
        }
        writer.close()
        let uploads = uploader?.finish(waiting: options.waitForUploads)
        var summary = tally.summary(elapsed: 0)
        if let remote = options.remote, let uploads {
            summary.remote = RemoteWarmSummary(remote: remote.tier.description, statistics: remote.statistics, uploads: uploads)
        }
        if let exporting { summary.freedesktop = await exporting.finish() }
        // A share saw only its files: the others are not gone.
        summary.index = feeder?.finish(roots: options.shard == nil ? roots : [])
        summary.transientFailures += feeder?.provisionalItems ?? 0
        summary.elapsedSeconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        return summary
    }

    /// Walks `roots` into `queue`, a handful of files at a time, and closes it.
    private static func walk(_ roots: [String], with walker: DirectoryWalker, into queue: SharedWork<(path: String, snapshot: FileSnapshot?)>,
                             tally: Tally, shard: WarmShard?) {
        var handful: [(path: String, snapshot: FileSnapshot?)] = []
        // The first handfuls are small (1, 2, 4…), so that every worker has a file at once.
        var size = 1
        func hand() {
            tally.found(handful.count)
            // Largest first: a long file then starts early and the rest fill the other workers
            // around it, instead of one starting last and the others waiting for it to end.
            handful.sort { ($0.snapshot?.size ?? 0) > ($1.snapshot?.size ?? 0) }
            queue.push(handful)
            handful = []
            size = min(size * 2, Self.handful)
        }
        walker.walk(roots) { entry in
            switch entry {
            case .file(let path, let snapshot):
                if let shard, !shard.contains(relativePath: WarmShard.relative(path, roots: roots)) {
                    tally.outsideShard()
                    return
                }
                handful.append((path, snapshot))
                if handful.count == size { hand() }
            case .failure(let error): tally.record(.failed(error.path, error.reason.description))
            }
        }
        if !handful.isEmpty { hand() }
        tally.walkFinished()
        queue.finish()
    }

    /// Everything one file needs; returns its outcome, the records to commit together and, when
    /// exporting, what to export once they are committed.
    static func process(_ path: String, snapshot: FileSnapshot? = nil, factory: ThumbnailFactory, decoding: any ImageDecoding,
                        hasher: ContentHasher, options: Options, tally: Tally, feeder: IndexFeeder? = nil)
        -> (Outcome, [StoreWrite], FreedesktopExporter.Job?)
    {
        process(identify(path, snapshot: snapshot, factory: factory, hasher: hasher), factory: factory, decoding: decoding, options: options,
                tally: tally, feeder: feeder)
    }

    /// Everything an identified file needs (see above); `prefetched` is what a batched look-up
    /// of the remote tier found.
    static func process(_ identified: Identification, factory: ThumbnailFactory, decoding: any ImageDecoding, options: Options,
                        tally: Tally, feeder: IndexFeeder? = nil, prefetched: [ThumbnailKey: (RemoteThumbnail, RGBAImage)]? = nil)
        -> (Outcome, [StoreWrite], FreedesktopExporter.Job?)
    {
        let file: Identified
        switch identified {
        case .known(let known): file = known
        case .unknown(let outcome): return (outcome, [], nil)
        }
        let (path, id, type) = (file.path, file.id, file.type)
        var writes = file.writes
        // The index is fed after the thumbnails, with the header their decode read and the words
        // that came along with it (no second request to a worker for either).
        let wordsFormat = options.textLimit > 0 ? feeder?.claimWords(id: id, type: type) : nil
        let header = DecodedHeader(wordsLimit: wordsFormat == nil ? nil : options.textLimit)
        let outcome = makeThumbnails(path, id: id, type: type, factory: factory, decoding: decoding, header: header, options: options,
                                     tally: tally, writes: &writes, prefetched: prefetched)
        // A worker killed from outside: what the index learns now is kept provisional, and the
        // words not recorded as none, so the warm that makes the thumbnail indexes them too.
        let transient = if case .failed(_, _, transient: true) = outcome { true } else { false }
        feeder?.submit(path: path, id: id, type: type, decoded: header.info, provisional: transient && header.info == nil)
        if let feeder, let wordsFormat, !transient {
            // Not decoded here (cached already, or it failed) or not read along: asked on their own.
            let words = header.words ?? (try? decoding.text(ofFileAt: path, format: wordsFormat, limit: options.textLimit).text) ?? ""
            feeder.addWords(content: id.content, words)
        }
        var export: FreedesktopExporter.Job?
        if options.freedesktop != nil {
            let types = factory.types
            let keys = FreedesktopKey.keys(for: header.info, isImage: types.conforms(type, to: .image), isMovie: types.conforms(type, to: .movie))
            export = FreedesktopExporter.Job(path: path, snapshot: id.snapshot, content: id.content, mimeType: types.mimeType(of: type),
                                             keys: keys, failed: false)
        }
        return (outcome, writes, export)
    }

    private static func makeThumbnails(_ path: String, id: FileIdentity, type: ContentType, factory: ThumbnailFactory,
                                       decoding: any ImageDecoding, header: DecodedHeader, options: Options, tally: Tally,
                                       writes: inout [StoreWrite], prefetched: [ThumbnailKey: (RemoteThumbnail, RGBAImage)]?) -> Outcome {
        let pipeline = ThumbnailPipeline(factory: factory, decoding: decoding, header: header, standardThumbnails: options.standardThumbnails,
                                         remote: options.remote)
        // The name promises a format we make thumbnails of, but the bytes are not one.
        if let named = factory.brokenPromise(path: path, type: type) {
            return .failed(path, id.snapshot.size == 0 ? "empty file" : GenerationError.Reason.notWhatItsNameSays(named: named, content: type).description)
        }
        let specs: [ThumbnailSpec]
        switch pipeline.plan(type: type, specs: options.specs) {
        case .success(let served): specs = served
        case .failure(.belowMinimumDimension), .failure(.noProvider): return .notSupported
        }
        // The store first: on a re-warm everything is there, and claiming every content in a set
        // cost more than the look-ups. Another path with the same bytes made (or being made) in
        // this run: nothing more to make.
        let missing = specs.filter { (try? factory.store.containsThumbnail($0.key(for: id.content))) != true }
        if missing.isEmpty { return tally.claimed(id.content) ? .sameContentAsAnother : .alreadyCached }
        guard tally.claim(id.content) else { return .sameContentAsAnother }
        let made = pipeline.make(missing, path: path, content: id.content, type: type, sourceBytes: Int64(clamping: id.snapshot.size),
                                 prefetched: prefetched)
        writes += made.writes(content: id.content)
        // An audio file without a cover: its record keeps it from being opened again; the icon stands in.
        if made.hasNoPicture { return .notSupported }
        if let record = made.failedBefore { return .failed(path, record.reason + " (recorded earlier; --retry-failed tries again)") }
        if let failure = made.failure {
            return .failed(path, ThumbnailPipeline.reason(failure), transient: WorkerFailure.wasKilled(failure))
        }
        return made.fetched == missing.count ? .fetched : .generated
    }

    enum Outcome {
        case generated
        /// Every missing thumbnail came from the remote tier: nothing decoded.
        case fetched
        case alreadyCached
        case sameContentAsAnother
        case notSupported
        /// `transient`: for a reason of the moment (its worker killed from outside), so a later
        /// warm makes it.
        case failed(String, String, transient: Bool = false)
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
        var walkComplete = false
        var unwritten: [String] = []
        var files: Int { generated + fetched + alreadyCached + duplicates + notSupported + failed }
    }
    private let state = ConditionLockedState(State())
    private let start = MonotonicClock.nanoseconds()

    func found(_ count: Int = 1) { state.withLock { $0.found += count } }
    func outsideShard() { state.withLock { $0.outsideShard += 1 } }
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
            WarmSummary(seen: s.files, outsideShard: s.outsideShard, generated: s.generated, fetched: s.fetched, alreadyCached: s.alreadyCached,
                        sameContentAsAnother: s.duplicates,
                        notSupported: s.notSupported, failures: s.failures.mapValues { $0.sorted() },
                        elapsedSeconds: Double(elapsed) / 1e9, cacheWriteFailures: s.unwritten, transientFailures: s.transient)
        }
    }
}
