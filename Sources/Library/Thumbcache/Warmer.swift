import Dispatch
import FoundationEssentials
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheRemote
import ThumbcacheStore
import ThumbcacheSync
import ThumbcacheWorker

/// Precomputes the cache for every file under some directories.
///
/// One or two walker threads and `jobs` worker threads (their own, not Swift's cooperative pool: they
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
    static let handful = 128

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
        // half of what another has not started once that one is stuck on a slow file; quick
        // small files go several at a time (SharedWork).
        let queue = SharedWork<(path: String, snapshot: FileSnapshot?)>(capacity: 65_536 / Self.handful, workers: options.jobs) {
            $0.snapshot?.size ?? 0
        }
        let tally = Tally()
        let threads = DispatchGroup()
        let exporting = options.freedesktop.map { Exporting(FreedesktopExporter(export: $0, store: store), threads: options.jobs) }
        let uploader = options.remote.map { RemoteUploader(store: store, remote: $0) }
        let committer = FileCommitter(writer: writer, tally: tally, inFlight: DispatchSemaphore(value: 256), exporting: exporting,
                                      uploader: uploader, progress: progress)

        if options.retryFailed { _ = try? store.clearAllFailures() }
        // Read before anything is looked at: a removal during the warm makes a vouch written with
        // this count stale, never wrong.
        let run = Run(options: options, factory: factory, decoding: decoding, tally: tally, feeder: feeder, removals: try? store.removalCount())
        // Absolute, canonical roots: the stat cache (and later the index) is keyed by path, so
        // `warm .` and `warm /home/me/Pictures` must name the same files the same way.
        let roots = roots.map { FilePaths.resolved($0.fileSystemPath) }
        threads.enter()
        detachThread {
            Self.walk(roots, with: walker, into: queue, tally: tally, shard: options.shard)
            threads.leave()
        }
        for worker in 0..<options.jobs {
            threads.enter()
            detachThread {
                Self.work(worker, queue: queue, run: run, committer: committer)
                threads.leave()
            }
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
        // The walk's `fstatat` calls cost about as much as a re-warm's whole check of the files
        // they find: one walking thread left the workers waiting on it.
        walker.walk(roots, threads: Self.walkThreads, run: Self.handful) { entries in
            var handful: [(path: String, snapshot: FileSnapshot?)] = []
            handful.reserveCapacity(entries.count)
            for entry in entries {
                switch entry {
                case .file(let path, let snapshot):
                    if let shard, !shard.contains(relativePath: WarmShard.relative(path, roots: roots)) {
                        tally.outsideShard()
                        continue
                    }
                    handful.append((path, snapshot))
                case .special: tally.specialFile()
                case .failure(let error): tally.record(.failed(error.path, error.reason.description))
                }
            }
            guard !handful.isEmpty else { return }
            tally.found(handful.count)
            // Largest first: a long file then starts early and the rest fill the other workers
            // around it, instead of one starting last and the others waiting for it to end.
            handful.sort { ($0.snapshot?.size ?? 0) > ($1.snapshot?.size ?? 0) }
            queue.push(handful)
        }
        tally.walkFinished()
        queue.finish()
    }

    /// Threads that walk the roots: one per core, at most two.
    static var walkThreads: Int { min(2, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Everything an identified file needs; returns its outcome, the records to commit together
    /// and, when exporting, what to export once they are committed. `prefetched` is what a
    /// batched look-up of the remote tier found.
    static func process(_ identified: Identification, _ run: Run, prefetched: [ThumbnailKey: (RemoteThumbnail, RGBAImage)]? = nil)
        -> (Outcome, [StoreWrite], FreedesktopExporter.Job?)
    {
        let (factory, decoding, feeder) = (run.factory, run.decoding, run.feeder)
        let file: Identified
        switch identified {
        case .known(let known): file = known
        case .unknown(let outcome): return (outcome, [], nil)
        }
        let (path, id, type) = (file.path, file.id, file.type)
        var writes = file.writes
        // The index is fed after the thumbnails, with the header their decode read and the words
        // that came along with it (no second request to a worker for either).
        let words = run.options.textLimit > 0 ? feeder?.claimWords(id: id, type: type) : nil
        let wordsFormat: ImageFormat? = if case .read(let format) = words { format } else { nil }
        let header = DecodedHeader(wordsLimit: wordsFormat == nil ? nil : run.options.textLimit)
        var complete: UInt32?
        let outcome = makeThumbnails(path, id: id, type: type, run, header: header, writes: &writes, complete: &complete, prefetched: prefetched)
        if let removals = run.removals, let complete {
            // Words not asked about in this warm keep what the entry said of them.
            let wordsStamp = words.flatMap { feeder?.vouch($0) } ?? id.cachedVouch?.words ?? 0
            vouch(StatVouch(removals: removals, specs: complete, words: wordsStamp), for: file, in: &writes)
        }
        // A worker killed from outside: what the index learns now is kept provisional, and the
        // words not recorded as none, so the warm that makes the thumbnail indexes them too.
        let transient = if case .failed(_, _, transient: true) = outcome { true } else { false }
        feeder?.submit(path: path, id: id, type: type, decoded: header, provisional: transient && !header.hasInfo)
        if let feeder, let wordsFormat, !transient {
            // Not decoded here (cached already, or it failed) or not read along: asked on their own.
            let words = header.words ?? (try? decoding.text(ofFileAt: path, format: wordsFormat, limit: run.options.textLimit).text) ?? ""
            feeder.addWords(content: id.content, words)
        }
        var export: FreedesktopExporter.Job?
        if run.options.freedesktop != nil {
            let types = factory.types
            let keys = FreedesktopKey.keys(for: header.info, isImage: types.conforms(type, to: .image), isMovie: types.conforms(type, to: .movie))
            export = FreedesktopExporter.Job(path: path, snapshot: id.snapshot, content: id.content, mimeType: types.mimeType(of: type),
                                             keys: keys, failed: false)
        }
        return (outcome, writes, export)
    }

    /// Makes what the store lacks of the file's thumbnails. `complete` is set to the stamp of its
    /// plan's thumbnails when all of them are stored once `writes` commit (or it has none to make).
    private static func makeThumbnails(_ path: String, id: FileIdentity, type: ContentType, _ run: Run, header: DecodedHeader,
                                       writes: inout [StoreWrite], complete: inout UInt32?,
                                       prefetched: [ThumbnailKey: (RemoteThumbnail, RGBAImage)]?) -> Outcome {
        let (factory, decoding, tally, removals) = (run.factory, run.decoding, run.tally, run.removals)
        let pipeline = ThumbnailPipeline(factory: factory, decoding: decoding, header: header, standardThumbnails: run.options.standardThumbnails,
                                         remote: run.options.remote)
        // The name promises a format we make thumbnails of, but the bytes are not one. (Not
        // asked again of a file its entry vouches for: that warm asked it of the same name and type.)
        if id.cachedVouch == nil, let named = factory.brokenPromise(path: path, type: type) {
            return .failed(path, id.snapshot.size == 0 ? "empty file" : GenerationError.Reason.notWhatItsNameSays(named: named, content: type).description)
        }
        let specs: [ThumbnailSpec]
        switch pipeline.plan(type: type, specs: run.options.specs) {
        case .success(let served): specs = served
        case .failure(.belowMinimumDimension), .failure(.noProvider):
            complete = StatVouch.SpecStamp().value
            return .notSupported
        }
        var specStamp = StatVouch.SpecStamp()
        for spec in specs { specStamp.add(boxWidth: UInt32(spec.boxWidth), boxHeight: UInt32(spec.boxHeight), variant: spec.variant(.thumbnail)) }
        let stamp = specStamp.value
        // The stat entry saw them all stored, and none was removed since: no look-up (random
        // leaves of a large tree, a fifth of a re-warm). Else the store first: on a re-warm
        // everything is there, and claiming every content in a set cost more than the look-ups.
        // Another path with the same bytes made (or being made) in this run: nothing more to make.
        let vouched = removals != nil && id.cachedVouch.map { $0.removals == removals && $0.specs == stamp } == true
        let missing = vouched ? [] : specs.filter { (try? factory.store.containsThumbnail($0.key(for: id.content))) != true }
        if missing.isEmpty {
            complete = stamp
            return tally.claimed(id.content) ? .sameContentAsAnother : .alreadyCached
        }
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
        complete = stamp  // committed with the stat entry that says so
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
