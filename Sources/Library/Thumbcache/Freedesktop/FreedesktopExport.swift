import Dispatch
import Synchronization
import ThumbcacheImaging
import ThumbcacheStore

/// Which standard thumbnails a warm also writes (``Warmer/Options/freedesktop``), and where.
public struct FreedesktopExport: Sendable, Hashable {
    public var cache: FreedesktopThumbnailCache
    public var sizes: [FreedesktopThumbnailCache.Size]

    /// - Parameters:
    ///   - cache: the standard cache to write into (`$XDG_CACHE_HOME/thumbnails` by default).
    ///   - sizes: the size directories to fill; the standard's `normal` and `large` by default.
    public init(cache: FreedesktopThumbnailCache = FreedesktopThumbnailCache(), sizes: [FreedesktopThumbnailCache.Size] = [.normal, .large]) {
        self.cache = cache
        self.sizes = Array(Set(sizes)).sorted()
    }

    /// The thumbnail the store must hold for every size to be made from it: the largest size's box.
    var sourceSpec: ThumbnailSpec? { sizes.last.map { ThumbnailSpec(size: $0.pixels) } }
}

/// What writing standard thumbnails did.
public struct FreedesktopSummary: Sendable, Codable, Hashable {
    /// Thumbnail files written (one per file and size).
    public var written = 0
    /// Files whose standard thumbnails were all valid already: nothing written.
    public var unchanged = 0
    /// Failure entries written under `fail/thumbcache-VERSION/`.
    public var failuresRecorded = 0
    /// Files that could not be exported, with the reason (an unwritable cache, say).
    public var errors: [String] = []

    /// Nothing done yet, filled by a warm: an app reads summaries, it does not make them.
    package init() {}
}

/// Writes the standard thumbnails of files the store has thumbnails of, from those thumbnails:
/// the store's image is decoded (a small PNG or JPEG of our own making) and shrunk to each size,
/// never the source file again.
final class FreedesktopExporter: Sendable {
    /// One file to export, after its thumbnails are committed.
    struct Job: Sendable {
        var path: String
        var snapshot: FileSnapshot
        var content: ContentHash
        var mimeType: String?
        var keys: [FreedesktopKey]
        /// The file's thumbnail could not be made: record a failure instead.
        var failed: Bool
    }

    let export: FreedesktopExport
    let store: ThumbnailStore
    private let counts = Mutex(FreedesktopSummary())

    init(export: FreedesktopExport, store: ThumbnailStore) {
        self.export = export
        self.store = store
    }

    var summary: FreedesktopSummary { counts.withLock { $0 } }

    func run(_ job: Job) {
        let source = FreedesktopThumbnailCache.Source(path: job.path, snapshot: job.snapshot)
        let cache = export.cache
        do {
            if job.failed {
                guard !FreedesktopThumbnailCache.isValid(thumbnailAt: cache.failurePath(forURI: source.uri), for: source) else { return }
                try cache.writeFailure(for: source)
                counts.withLock { $0.failuresRecorded += 1 }
                return
            }
            let stale = export.sizes.filter { !FreedesktopThumbnailCache.isValid(thumbnailAt: cache.path(forURI: source.uri, size: $0), for: source) }
            if stale.isEmpty {
                counts.withLock { $0.unchanged += 1 }
                return
            }
            let stored = try store.thumbnails(of: job.content).filter { $0.key.variant == ThumbnailSpec(size: 1).variant(.thumbnail) }
            var decoded: [ThumbnailKey: RGBAImage] = [:]
            for size in stale {
                guard let key = Self.source(for: size, among: stored) else {
                    throw FreedesktopError(path: job.path, reason: .noLargeEnoughThumbnail(size: size.rawValue, pixels: size.pixels))
                }
                if decoded[key] == nil {
                    guard let record = try store.thumbnail(key) else { throw FreedesktopError(path: job.path, reason: .storedThumbnailGone) }
                    decoded[key] = try record.image()
                }
                let image = ThumbnailFactory.resize(decoded[key]!, to: ThumbnailSpec(size: size.pixels))
                try cache.write(image, for: source, size: size, mimeType: job.mimeType, extraKeys: job.keys.map { ($0.key, $0.value) })
                counts.withLock { $0.written += 1 }
            }
        } catch {
            counts.withLock { $0.errors.append("\(job.path): \(error)") }
        }
    }

    /// The smallest stored box that covers `size`, else the largest one if its image did not fill
    /// its box (the source itself is smaller: no larger thumbnail of it can exist).
    static func source(for size: FreedesktopThumbnailCache.Size, among stored: [(key: ThumbnailKey, header: ThumbnailHeader)]) -> ThumbnailKey? {
        if let covering = stored.first(where: { min($0.key.boxWidth, $0.key.boxHeight) >= size.pixels }) { return covering.key }
        guard let largest = stored.last, largest.header.pixelWidth < largest.key.boxWidth, largest.header.pixelHeight < largest.key.boxHeight
        else { return nil }
        return largest.key
    }
}

/// A key/value of a standard thumbnail beyond URI, MTime, Size and Mimetype.
struct FreedesktopKey: Sendable, Hashable {
    var key: String
    var value: String

    /// The image, document and movie keys the standard defines, from what a decode read.
    static func keys(for info: ImageInfo?, isImage: Bool, isMovie: Bool) -> [FreedesktopKey] {
        guard let info else { return [] }
        var keys: [FreedesktopKey] = []
        if isImage {
            keys.append(FreedesktopKey(key: "Thumb::Image::Width", value: String(info.pixelWidth)))
            keys.append(FreedesktopKey(key: "Thumb::Image::Height", value: String(info.pixelHeight)))
        }
        if let pages = info.media?.pageCount { keys.append(FreedesktopKey(key: "Thumb::Document::Pages", value: String(pages))) }
        if isMovie, let seconds = info.media?.durationSeconds, seconds.isFinite, seconds >= 0 {
            keys.append(FreedesktopKey(key: "Thumb::Movie::Length", value: String(Int(seconds.rounded()))))
        }
        return keys
    }
}

/// A warm's export threads: files are queued once their records are committed (the exporter
/// reads their thumbnails from the store) and written by `threads` threads of their own.
final class Exporting: Sendable {
    private let exporter: FreedesktopExporter
    private let queue: SharedWork<FreedesktopExporter.Job>
    /// Files whose bytes another path of this run thumbnailed: that path's records may not be
    /// committed yet, so these wait for the end of the run.
    private let deferred = Mutex<[FreedesktopExporter.Job]>([])
    private let running = DispatchGroup()

    init(_ exporter: FreedesktopExporter, threads: Int) {
        self.exporter = exporter
        queue = SharedWork(capacity: 4096, workers: max(1, threads))
        for thread in 0..<max(1, threads) {
            running.enter()
            detachThread { [queue, running] in
                while let job = queue.next(for: thread) { exporter.run(job) }
                running.leave()
            }
        }
    }

    func submit(_ job: FreedesktopExporter.Job, after outcome: Warmer.Outcome) {
        switch outcome {
        case .generated, .fetched, .alreadyCached: queue.push([job])
        case .sameContentAsAnother: deferred.withLock { $0.append(job) }
        case .failed:
            var failure = job
            failure.failed = true
            queue.push([failure])
        case .notSupported: break
        }
    }

    /// Exports the deferred files, waits for every thread and says what was written.
    func finish() async -> FreedesktopSummary {
        for job in deferred.withLock({ $0 }) { queue.push([job]) }
        queue.finish()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            running.notify(queue: .global()) { done.resume() }
        }
        return exporter.summary
    }
}
