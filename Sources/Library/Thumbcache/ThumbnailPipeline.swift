import ThumbcacheImaging
import ThumbcacheRemote
import ThumbcacheStore
import ThumbcacheWorker

/// The one path from an identified file to the records that store its thumbnails: provider →
/// minimum dimension → recorded failure → size ladder → render → encode. ``ThumbnailGenerator``
/// and ``Warmer`` both run it, so a rule (which failures are remembered, where a smaller
/// thumbnail comes from) holds for both; the worker boundary of sandboxed decoding sits inside
/// ``ThumbnailFactory/render(path:type:spec:)``.
package struct ThumbnailPipeline: Sendable {
    package let factory: ThumbnailFactory
    /// Where the built-in decoders run.
    package let decoding: any ImageDecoding
    /// Receives the image header a decode reads, for the caller to index.
    package let header: DecodedHeader?
    /// Where valid standard thumbnails another program made may stand in for a decode of the file.
    package let standardThumbnails: FreedesktopThumbnailCache?
    /// The shared tier asked before any decode, and given what is made here (queued).
    package let remote: RemoteCache?

    package init(factory: ThumbnailFactory, decoding: any ImageDecoding, header: DecodedHeader? = nil,
                 standardThumbnails: FreedesktopThumbnailCache? = nil, remote: RemoteCache? = nil) {
        self.factory = factory
        self.decoding = decoding
        self.header = header
        self.standardThumbnails = standardThumbnails
        self.remote = remote
    }

    /// Why nothing is made for a file.
    package enum Refusal: Error, Equatable {
        /// No provider handles the file's exact type.
        case noProvider(ContentType)
        /// Every box is below the provider's minimum dimension.
        case belowMinimumDimension(Int)
    }

    /// The boxes of `specs` the provider for `type` makes real thumbnails for, largest first.
    package func plan(type: ContentType, specs: [ThumbnailSpec]) -> Result<[ThumbnailSpec], Refusal> {
        guard let provider = factory.provider(for: type) else { return .failure(.noProvider(type)) }
        let served = specs.filter { min($0.boxWidth, $0.boxHeight) >= provider.minimumDimension }
        guard !served.isEmpty else { return .failure(.belowMinimumDimension(provider.minimumDimension)) }
        return .success(served.sorted { $0.boxWidth * $0.boxHeight > $1.boxWidth * $1.boxHeight })
    }

    /// What ``make(_:path:content:type:minimumSide:)`` produced.
    package struct Made: Sendable {
        /// One `.thumbnail` write per box made (with the spec it was made for).
        package var thumbnails: [(spec: ThumbnailSpec, header: ThumbnailHeader, data: [UInt8])] = []
        /// The pixels of the first thumbnail, for a caller that uses them at once (the daemon
        /// writes its standard thumbnail from them instead of decoding what was just encoded).
        package var firstImage: RGBAImage?
        /// Why the file failed, if it did; ``failureRecord`` is set when the content is at fault.
        package var failure: (any Error)?
        /// The record that keeps the same bytes from being tried again (until `--retry-failed` or
        /// a new generator version).
        package var failureRecord: StoreWrite?
        /// A failure recorded for these bytes by an earlier run: nothing was tried.
        package var failedBefore: FailureRecord?
        /// How many of ``thumbnails`` came from the remote tier (the rest were made here).
        package var fetched = 0
        /// The made ones queued for upload to the remote tier.
        package var uploads: [StoreWrite] = []

        /// The file has no picture to show (an audio file without a cover), found now or recorded
        /// earlier: not a failure, the type's icon stands in.
        package var hasNoPicture: Bool {
            if let failedBefore { return failedBefore.kind == .noPicture }
            guard let error = failure as? ImagingError, case .noPicture = error.reason else { return false }
            return true
        }

        /// The records to commit: thumbnails and their uploads, or the failure record.
        package func writes(content: ContentHash) -> [StoreWrite] {
            thumbnails.map { .thumbnail($0.spec.key(for: content), $0.header, data: $0.data) } + uploads + (failureRecord.map { [$0] } ?? [])
        }
    }

    /// Makes the thumbnails of `specs` (which ``plan(type:specs:)`` returned) for the file at
    /// `path` whose bytes hash to `content`. Each box comes from a larger image already in hand —
    /// one made in this call, a larger thumbnail of the same content in the cache, or a valid
    /// standard thumbnail of the file at least as large — and only otherwise from the file. With
    /// a remote tier, it is asked first for every box; what it has is kept as it came.
    /// - Parameters:
    ///   - minimumSide: pixels; a thumbnail whose smaller side comes out below this is a failure
    ///     of this request (``GenerationError/Reason/belowMinimumDimension(_:)``), not of the content.
    ///   - sourceBytes: the file's size, for the remote tier's upload policy.
    ///   - prefetched: what the remote tier answered for these keys in a batch asked before
    ///     (``Warmer``'s lookahead); a key not in it is a miss. Nil: asked here.
    package func make(_ specs: [ThumbnailSpec], path: String, content: ContentHash, type: ContentType, minimumSide: Int = 0,
                      sourceBytes: Int64 = .max, prefetched: [ThumbnailKey: (RemoteThumbnail, RGBAImage)]? = nil) -> Made {
        var made = Made()
        let failureVersion = factory.failureVersion(for: type)
        if let earlier = try? factory.store.failure(content: content, generatorVersion: failureVersion) {
            made.failedBefore = earlier
            return made
        }
        var images: [(spec: ThumbnailSpec, image: RGBAImage)] = []
        let keys = specs.map { $0.key(for: content) }
        let fetched = prefetched.map { found in keys.map { found[$0] } } ?? remote?.fetch(keys) ?? []
        var madeHere: [ThumbnailSpec] = []
        do {
            for (i, spec) in specs.enumerated() {
                if i < fetched.count, let (thumbnail, image) = fetched[i], min(image.width, image.height) >= minimumSide {
                    images.append((spec, image))
                    if made.firstImage == nil { made.firstImage = image }
                    made.thumbnails.append((spec, thumbnail.header, thumbnail.data))
                    made.fetched += 1
                    if let header, header.info == nil, let attributes = thumbnail.attributes { header.info = attributes }
                    continue
                }
                let image = try images.first(where: { Self.canServe(spec, from: $0.spec) }).map { ThumbnailFactory.resize($0.image, to: spec) }
                    ?? cachedLarger(spec, content: content)
                    ?? imported(spec, path: path)
                    ?? factory.render(path: path, type: type, spec: spec, decoding: decoding, header: header)
                if min(image.width, image.height) < minimumSide {
                    throw GenerationError(path: path, reason: .belowMinimumDimension(minimumSide))
                }
                images.append((spec, image))
                if made.firstImage == nil { made.firstImage = image }
                let (header, bytes) = try factory.encode(image, kind: .thumbnail, spec: spec, sourceType: type)
                made.thumbnails.append((spec, header, bytes))
                madeHere.append(spec)
            }
            if let remote, !madeHere.isEmpty, remote.uploadPolicy.shouldUpload(sourceBytes: sourceBytes, type: type.identifier) {
                let attributes = RemoteThumbnail.encodeAttributes(header?.info)
                made.uploads = madeHere.map { .queueUpload($0.key(for: content), attributes: attributes) }
            }
        } catch {
            made.thumbnails = []
            made.firstImage = nil
            made.fetched = 0
            made.uploads = []
            made.failure = error
            if Self.isContentFault(error) {
                made.failureRecord = .failure(content: content, generatorVersion: failureVersion,
                                              FailureRecord(kind: Self.kind(error), reason: Self.reason(error),
                                                            created: StoreClock.nowNanoseconds()))
            }
        }
        return made
    }

    /// A larger cached thumbnail of the same content and variant, shrunk to `spec`.
    private func cachedLarger(_ spec: ThumbnailSpec, content: ContentHash) throws -> RGBAImage? {
        let variant = spec.variant(.thumbnail)
        guard let larger = try factory.store.thumbnails(of: content).first(where: {
            $0.key.variant == variant && $0.key.boxWidth >= UInt32(spec.boxWidth) && $0.key.boxHeight >= UInt32(spec.boxHeight)
        }), let record = try factory.store.thumbnail(larger.key), record.header.encoding == .png else { return nil }
        return ThumbnailFactory.resize(try ImageDecoder.png(record.data), to: spec)
    }

    /// A valid standard thumbnail of the file (URI, MTime and Size as the standard checks them)
    /// whose size covers `spec`'s box, decoded where the decoders run: another program wrote it.
    private func imported(_ spec: ThumbnailSpec, path: String) -> RGBAImage? {
        guard let cache = standardThumbnails, spec.mode == .fit, !spec.linearLight, let snapshot = try? FileSnapshot.of(path: path) else {
            return nil
        }
        let source = FreedesktopThumbnailCache.Source(path: path, snapshot: snapshot)
        let options = ThumbnailOptions(maxWidth: spec.boxWidth, maxHeight: spec.boxHeight)
        for size in FreedesktopThumbnailCache.Size.allCases where size.pixels >= max(spec.boxWidth, spec.boxHeight) {
            let file = cache.path(forURI: source.uri, size: size)
            guard FreedesktopThumbnailCache.isValid(thumbnailAt: file, for: source),
                let (image, _) = try? decoding.thumbnail(ofFileAt: file, options: options, format: nil)
            else { continue }
            factory.countImport()
            return image
        }
        return nil
    }

    /// An image made for `larger` can be shrunk into `spec`: same variant, a box at least as large.
    /// A filled image is cropped to its box, so only fitted ones serve other boxes.
    static func canServe(_ spec: ThumbnailSpec, from larger: ThumbnailSpec) -> Bool {
        larger.mode == .fit && spec.mode == .fit && larger.linearLight == spec.linearLight
            && larger.boxWidth >= spec.boxWidth && larger.boxHeight >= spec.boxHeight
    }

    /// True if `error` says something about the bytes (they would fail the same way again), not
    /// about this read of the file or this request: then the failure is recorded.
    package static func isContentFault(_ error: any Error) -> Bool {
        switch error {
        case let error as ImagingError:
            switch error.reason {
            // A read that failed, or a decoder this process or worker does not link (an
            // --in-process warm of a WebP, one worker program set for every family): a run with
            // every family's worker would succeed, so nothing is remembered against the bytes;
            // nor a page the request asked for that the file does not have.
            case .unreadable, .decoderNotInProcess, .decodedElsewhere, .noSuchPage: return false
            default: return true
            }
        case let error as WorkerFailure: return error.isContentFault
        case let error as PluginSandbox.Failure: return error.isContentFault
        case is FileError, is GenerationError, is CancellationError, is StoreError: return false
        default: return true  // a provider's own error about this file
        }
    }

    /// The kind a failure record keeps, which callers decide by.
    package static func kind(_ error: any Error) -> FailureRecord.Kind {
        switch error {
        case let error as ImagingError:
            switch error.reason {
            case .noPicture: .noPicture
            case .tooLarge: .tooLarge
            default: .rejected
            }
        case is WorkerFailure: .workerFailed
        case let error as PluginSandbox.Failure: if case .timedOut = error.reason { .workerFailed } else { .rejected }
        default: .rejected
        }
    }

    /// The reason a warm lists and a failure record keeps: without the path, which the list adds.
    package static func reason(_ error: any Error) -> String {
        switch error {
        case let error as ImagingError: error.reason.description
        case let error as GenerationError: error.reason.description
        case let error as FileError: error.reason.description
        case let error as WorkerFailure: error.reason.description
        default: "\(error)"
        }
    }
}
