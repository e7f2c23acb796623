import Dispatch
import FoundationEssentials
import Synchronization
import ThumbcacheImaging
import ThumbcacheRemote
import ThumbcacheStore
import ThumbcacheWorker

/// Makes, caches and serves thumbnails, after `QLThumbnailGenerator`, bound to one store.
///
/// ```swift
/// let generator = ThumbnailGenerator(store: try ThumbnailStore.open(directory: ThumbnailStore.defaultDirectory))
/// let request = ThumbnailRequest(fileAt: "/photos/cat.jpg", size: 128, scale: 2)
/// for try await representation in generator.representations(for: request) {
///     show(representation)            // icon, then low quality, then the real thumbnail
/// }
/// ```
///
/// Identical requests in flight at once share one generation. Blocking work (reading, decoding)
/// runs on GCD threads, never on Swift's cooperative pool; decoding itself runs in sandboxed
/// worker processes unless ``DecoderIsolation/inProcess`` is asked for.
public final class ThumbnailGenerator: Sendable {
    package let factory: ThumbnailFactory
    /// Where the built-in decoders run (a pool of workers, started on first use).
    package let decoding: any ImageDecoding
    public var store: ThumbnailStore { factory.store }
    let writer: GroupCommitWriter
    let inFlight = InFlight()
    private let requests = Mutex(RequestStates())
    private let hashes = Atomic<Int>(0)
    /// Cache hits not yet written: recorded off the hit path, committed in batches.
    private let pendingAccesses = Mutex<[ThumbnailKey: UInt32]>([:])
    private static let accessBatch = 128

    /// Keeps the store within its budget, if one was given.
    package let budget: CacheBudget?
    /// The freedesktop cache whose valid thumbnails stand in for a decode, if one was given.
    package let standardThumbnails: FreedesktopThumbnailCache?
    /// The shared tier asked on a miss before decoding, if one was given.
    package let remote: RemoteCache?
    /// Uploads what this generator makes, in the background, while it lives.
    private let uploader: RemoteUploader?

    /// - Parameters:
    ///   - store: the cache the thumbnails are read from and written to.
    ///   - providers: who makes thumbnails of which exact content types; later ones win.
    ///   - types: the content types the files are detected as (add an app's own here).
    ///   - budget: bytes of thumbnails to keep at most; past it, garbage collection and
    ///     least-recently-used eviction run by themselves in the background.
    ///   - isolation: where the built-in decoders run: sandboxed worker processes (the default,
    ///     one per core at most) or this process.
    ///   - standardThumbnails: on a cache miss, a valid thumbnail another program left in this
    ///     freedesktop cache (at least the requested size) is used instead of decoding the file.
    ///   - remote: a shared tier asked on a miss before decoding; what is made here is queued for
    ///     it and uploaded in the background (``finishUploads(waiting:)`` before exiting).
    public convenience init(store: ThumbnailStore, providers: [any ThumbnailProvider] = [ImageThumbnailProvider()],
                            types: ContentTypeRegistry = ContentTypeRegistry(), budget: Int? = nil, isolation: DecoderIsolation = .sandboxed,
                            standardThumbnails: FreedesktopThumbnailCache? = nil, remote: RemoteCache? = nil) {
        self.init(store: store, providers: providers, types: types, budget: budget,
                  decoding: isolation.makeDecoding(defaultWorkers: ProcessInfo.processInfo.activeProcessorCount),
                  standardThumbnails: standardThumbnails, remote: remote)
    }

    /// With decoders made beforehand (a process made for one file starts its worker first).
    package init(store: ThumbnailStore, providers: [any ThumbnailProvider], types: ContentTypeRegistry, budget: Int? = nil,
                 decoding: any ImageDecoding, standardThumbnails: FreedesktopThumbnailCache?, remote: RemoteCache?) {
        self.standardThumbnails = standardThumbnails
        self.remote = remote
        uploader = remote.map { RemoteUploader(store: store, remote: $0) }
        factory = ThumbnailFactory(store: store, types: types, providers: providers)
        self.decoding = decoding
        writer = GroupCommitWriter(store: store)
        self.budget = budget.map { CacheBudget(store: store, budget: $0) }
    }

    deinit {
        flushAccesses()
        writer.close()
        _ = uploader?.finish(waiting: false)
    }

    /// Stops the background uploads; with `waiting`, first uploads what is queued (unless the
    /// remote is unavailable). Nil without a remote.
    public func finishUploads(waiting: Bool = true) -> RemoteUploadSummary? {
        uploader?.finish(waiting: waiting)
    }

    /// Queues the recorded cache hits for the writer (they are committed with its next batch).
    package func flushAccesses() {
        let pending = pendingAccesses.withLock { p -> [ThumbnailKey: UInt32] in
            defer { p = [:] }
            return p
        }
        guard !pending.isEmpty else { return }
        writer.enqueue(pending.map { .accessed($0.key, minute: $0.value) }) { _ in }
    }

    /// Notes a cache hit for least-recently-used eviction, without taking the write lock.
    func recordAccess(_ key: ThumbnailKey) {
        let full = pendingAccesses.withLock { p -> Bool in
            p[key] = currentMinute()
            return p.count >= Self.accessBatch
        }
        if full { flushAccesses() }
    }

    /// How many thumbnails this generator has rendered from source files (not served from the cache).
    package var generationCount: Int { factory.renderCount }

    /// How many thumbnails this generator made from valid standard thumbnails instead of the files.
    package var importCount: Int { factory.importCount }

    /// How many files this generator has read to hash (stat-cache misses).
    package var filesHashed: Int { hashes.load(ordering: .relaxed) }

    /// Cancellations kept for requests that are not running (yet, or any more).
    package var pendingCancellations: Int { requests.withLock { $0.cancelled.count } }

    // MARK: Public API

    /// The representations the request asks for, lower quality first: icon, low quality, thumbnail.
    /// A step may be skipped (no embedded thumbnail, say); the sequence ends after the best one,
    /// or with an error if the real thumbnail was asked for and could not be made.
    public func representations(for request: ThumbnailRequest) -> AsyncThrowingStream<ThumbnailRepresentation, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                begin(request)
                defer { end(request) }
                do {
                    let types = request.representationTypes
                    if types.contains(.icon) { continuation.yield(try await icon(for: request)) }
                    guard !types.isDisjoint(with: [.lowQualityThumbnail, .thumbnail, .preview]) else { return continuation.finish() }
                    // Identified once for every step: an uncached file is hashed once, not per step.
                    let resolved = try await resolve(request)
                    if types.contains(.lowQualityThumbnail), let low = try await lowQuality(for: request, resolved) {
                        continuation.yield(low)
                    }
                    if types.contains(.thumbnail) { continuation.yield(try await thumbnail(for: request, resolved)) }
                    if types.contains(.preview) { continuation.yield(try await preview(for: request, resolved)) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The best representation the request allows: the real thumbnail if it can be made, else the
    /// low-quality one, else the icon; throws only if none of the requested ones exists.
    public func bestRepresentation(for request: ThumbnailRequest) async throws -> ThumbnailRepresentation {
        begin(request)
        defer { end(request) }
        let types = request.representationTypes
        var firstError: (any Error)?
        var resolved: Resolved?
        if !types.isDisjoint(with: [.lowQualityThumbnail, .thumbnail, .preview]) {
            do { resolved = try await resolve(request) } catch is CancellationError { throw CancellationError() } catch {
                firstError = error
            }
        }
        if types.contains(.preview), let resolved {
            do { return try await preview(for: request, resolved) } catch is CancellationError { throw CancellationError() } catch {
                // A page the file does not have is the caller's mistake: no thumbnail of page 1 stands in.
                if let error = error as? ImagingError, case .noSuchPage = error.reason { throw error }
                firstError = error
            }
        }
        if types.contains(.thumbnail), let resolved {
            do { return try await thumbnail(for: request, resolved) } catch is CancellationError { throw CancellationError() } catch {
                firstError = error
            }
        }
        var fallback: ThumbnailRepresentation?
        if types.contains(.lowQualityThumbnail), let resolved, let low = try? await lowQuality(for: request, resolved) {
            fallback = low
        } else if types.contains(.icon) {
            fallback = try await icon(for: request)
        }
        guard var fallback else {
            if let firstError { throw firstError }
            throw GenerationError(path: request.path, reason: types == .lowQualityThumbnail ? .noLowQualityImage : .noProvider(request.contentType ?? .data))
        }
        fallback.standsInBecause = firstError.flatMap(Self.failureWorthSaying)
        return fallback
    }

    /// What a caller should hear about a failure a lesser representation stands in for: not
    /// that a type has no thumbnails, that a box is below their minimum, or that a file has no
    /// picture (an audio file without a cover), which is the icon's job.
    static func failureWorthSaying(_ error: any Error) -> String? {
        switch error {
        case let error as GenerationError:
            switch error.reason {
            case .noProvider, .belowMinimumDimension, .noLowQualityImage: return nil
            case .failedBefore(let record) where record.kind == .noPicture: return nil
            default: break
            }
        case let error as ImagingError:
            if case .noPicture = error.reason { return nil }
        default: break
        }
        return ThumbnailPipeline.reason(error)
    }

    /// Writes the best representation to `destination` as PNG (`.png`) or JPEG (`.jpeg`).
    public func saveBestRepresentation(for request: ThumbnailRequest, to destination: some FileLocation, contentType: ContentType = .png) async throws {
        let destination = destination.fileSystemPath
        let best = try await bestRepresentation(for: request)
        let bytes: [UInt8]
        switch contentType {
        case .png: bytes = try best.pngData()
        case .jpeg: bytes = try ImageEncoder.jpeg(best.image())
        default: throw GenerationError(path: destination, reason: .noProvider(contentType))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: destination), options: .atomic)
    }

    /// Cancels a request: its pending and later steps end with `CancellationError`. A request not
    /// started yet is cancelled when it starts; one that has ended is not remembered for long.
    public func cancel(_ request: ThumbnailRequest) {
        requests.withLock { $0.cancel(request.id) }
    }

    private func begin(_ request: ThumbnailRequest) { requests.withLock { $0.begin(request.id) } }
    private func end(_ request: ThumbnailRequest) { requests.withLock { $0.end(request.id) } }

    /// Stores a thumbnail an app made itself for the file's current content (as `UIDocument`'s
    /// thumbnail dictionary does): requests for that content then get it without generating.
    public func setThumbnail(_ image: RGBAImage, forFileAt path: some FileLocation, spec: ThumbnailSpec) async throws {
        let path = path.fileSystemPath
        let factory = self.factory
        let (id, header, bytes) = try await blocking {
            let id = try factory.store.identify(fileAt: path, hasher: factory.store.hasher())
            let type = factory.types.type(ofFileAt: path)
            let (header, bytes) = try factory.encode(ThumbnailFactory.resize(image, to: spec), kind: .thumbnail, spec: spec,
                                                     sourceType: type)
            return (id, header, bytes)
        }
        try await writer.submit([
            .file(path: path, snapshot: id.snapshot, content: id.content), .thumbnail(spec.key(for: id.content), header, data: bytes),
        ])
    }

    // MARK: Steps

    func checkCancelled(_ request: ThumbnailRequest) throws {
        try Task.checkCancellation()
        if requests.withLock({ $0.cancelled.contains(request.id) }) { throw CancellationError() }
    }

    func icon(for request: ThumbnailRequest) async throws -> ThumbnailRepresentation {
        try checkCancelled(request)
        let spec = request.spec
        let type = request.contentType ?? factory.types.type(ofFileAt: request.path)
        let (header, bytes) = factory.icon(for: type, spec: spec)
        return ThumbnailRepresentation(kind: .icon, header: header, data: bytes, box: spec, fromCache: true)
    }

    /// What the cache knows of a request's file: its identity and the stored representation of
    /// ``kind``, if any.
    struct Resolved: Sendable {
        var identity: FileIdentity
        var cached: ThumbnailRecord?
        /// What ``cached`` is: the thumbnail, or the preview when only a preview was asked for.
        var kind = RepresentationKind.thumbnail
    }

    /// Identifies the request's file and looks up its thumbnail (or its preview, when that is all
    /// it asks) in one hop to a GCD thread; a cache hit is one `stat` and one read transaction
    /// (stat cache and record together).
    func resolve(_ request: ThumbnailRequest) async throws -> Resolved {
        try checkCancelled(request)
        // No key can name such a page (and no file has one).
        guard request.page >= 0, request.page < Int(ThumbnailVariant.pageLimit) else {
            throw ImagingError(path: request.path, reason: .noSuchPage(page: request.page + 1, pages: 1))
        }
        let kind: RepresentationKind = request.representationTypes.isDisjoint(with: [.lowQualityThumbnail, .thumbnail]) ? .preview : .thumbnail
        let spec = kind == .preview ? request.previewSpec : request.spec
        let store = factory.store
        return try await blocking { [self] in
            let snapshot = try FileSnapshot.of(path: request.path)
            if let (content, record) = try store.withCachedThumbnail(
                path: request.path, snapshot: snapshot, boxWidth: UInt32(spec.boxWidth), boxHeight: UInt32(spec.boxHeight),
                variant: spec.variant(kind), { ($0, $1.copy()) })
            {
                return Resolved(identity: FileIdentity(path: request.path, snapshot: snapshot, content: content, fromCache: true),
                                cached: record, kind: kind)
            }
            // A miss: the same snapshot, not a second stat (a non-regular file fails here).
            let identity = try store.identify(fileAt: request.path, snapshot: snapshot, hasher: store.hasher())
            if !identity.fromCache { hashes.add(1, ordering: .relaxed) }
            // Another path may have had the same bytes thumbnailed.
            return Resolved(identity: identity, cached: try store.thumbnail(spec.key(for: identity.content, kind: kind)), kind: kind)
        }
    }

    func lowQuality(for request: ThumbnailRequest, _ resolved: Resolved) async throws -> ThumbnailRepresentation? {
        try checkCancelled(request)
        let spec = request.spec
        let content = resolved.identity.content
        return try await blocking { [factory, decoding] () -> ThumbnailRepresentation? in
            let store = factory.store
            // A smaller cached thumbnail of the same content, the largest of them.
            let variant = spec.variant(.thumbnail)
            let smaller = try store.thumbnails(of: content).filter {
                $0.key.variant == variant && $0.key.boxWidth < spec.boxWidth && $0.key.boxHeight < spec.boxHeight
            }.last
            if let smaller, let record = try store.thumbnail(smaller.key) {
                return ThumbnailRepresentation(kind: .lowQuality, header: record.header, data: record.data, box: spec, fromCache: true)
            }
            // The JPEG's embedded EXIF thumbnail: only a JPEG has one this reads, so no other type
            // costs a round trip to a worker for it.
            let type = request.contentType ?? factory.types.type(ofFileAt: request.path)
            if type == .jpeg, let embedded = try? decoding.embeddedThumbnail(ofFileAt: request.path) {
                let fitted = ThumbnailFactory.resize(embedded, to: spec)
                let (header, bytes) = try factory.encode(fitted, kind: .lowQuality, spec: spec, sourceType: .jpeg)
                return ThumbnailRepresentation(kind: .lowQuality, header: header, data: bytes, box: spec, fromCache: false)
            }
            return nil
        }
    }

    func thumbnail(for request: ThumbnailRequest, _ resolved: Resolved) async throws -> ThumbnailRepresentation {
        try checkCancelled(request)
        let spec = request.spec
        let id = resolved.identity
        let key = spec.key(for: id.content)
        return try await served(request, id: id, key: key, box: spec, cached: resolved.kind == .thumbnail ? resolved.cached : nil) { [self] in
            try await generate(request, id: id, key: key)
        }
    }

    /// `cached` under `key` when there is one (its use recorded for eviction, and the file's
    /// stat entry written if it was read now), else what `make` makes: one maker per key at a time.
    func served(_ request: ThumbnailRequest, id: FileIdentity, key: ThumbnailKey, box: ThumbnailSpec, cached: ThumbnailRecord?,
                make: @escaping @Sendable () async throws -> ThumbnailRepresentation) async throws -> ThumbnailRepresentation {
        if let cached {
            recordAccess(key)
            if !id.fromCache { try await writer.submit([.file(path: request.path, snapshot: id.snapshot, content: id.content)]) }
            return ThumbnailRepresentation(kind: key.variant.kind, header: cached.header, data: cached.data, box: box, fromCache: true)
        }
        let representation = try await inFlight.run(key, make)
        try checkCancelled(request)
        return representation
    }

    /// The request's content type, detected from the file when not given; a file whose name
    /// promises another type than its bytes (`photo.jpg` holding an HTML page) is an error.
    func contentType(of request: ThumbnailRequest) throws -> ContentType {
        if let given = request.contentType { return given }
        let type = factory.types.type(ofFileAt: request.path)
        if let named = factory.brokenPromise(path: request.path, type: type) {
            throw GenerationError(path: request.path, reason: .notWhatItsNameSays(named: named, content: type))
        }
        return type
    }

    /// Makes, stores and returns the thumbnail under `key` (one caller at a time per key).
    private func generate(_ request: ThumbnailRequest, id: FileIdentity, key: ThumbnailKey) async throws -> ThumbnailRepresentation {
        let spec = request.spec
        // The header the decode reads travels with an upload, for other machines' indexes.
        let pipeline = ThumbnailPipeline(factory: factory, decoding: decoding, header: remote == nil ? nil : DecodedHeader(),
                                         standardThumbnails: standardThumbnails, remote: remote)
        let type = try contentType(of: request)
        switch pipeline.plan(type: type, specs: [spec]) {
        case .failure(.noProvider(let type)): throw GenerationError(path: request.path, reason: .noProvider(type))
        case .failure(.belowMinimumDimension(let minimum)): throw GenerationError(path: request.path, reason: .belowMinimumDimension(minimum))
        case .success: break
        }
        let minimumSide = Int((request.minimumDimension * request.scale).rounded(.up))
        let made = try await blocking {
            pipeline.make([spec], path: request.path, content: id.content, type: type, minimumSide: minimumSide, sourceBytes: Int64(clamping: id.snapshot.size))
        }
        if let record = made.failedBefore { throw GenerationError(path: request.path, reason: .failedBefore(record)) }
        let fileEntry = StoreWrite.file(path: request.path, snapshot: id.snapshot, content: id.content)
        if let failure = made.failure {
            // Remembered when the bytes are at fault, so they are not tried again.
            if let record = made.failureRecord { try? await writer.submit([fileEntry, record]) }
            throw failure
        }
        guard let thumbnail = made.thumbnails.first else { throw GenerationError(path: request.path, reason: .noProvider(type)) }
        try await writer.submit([fileEntry] + made.writes(content: id.content))
        if !made.uploads.isEmpty { uploader?.nudge() }
        budget?.added(thumbnail.data.count)
        return ThumbnailRepresentation(kind: .thumbnail, header: thumbnail.header, data: thumbnail.data, box: spec, fromCache: false)
    }
}

/// Runs blocking work on a GCD thread and waits for it without blocking the cooperative pool.
package func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .userInitiated).async {
            continuation.resume(with: Result { try work() })
        }
    }
}

