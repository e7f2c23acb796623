import Synchronization
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheWorker

/// Makes thumbnails synchronously: provider → image fitted to the box → PNG. Shared by the
/// async ``ThumbnailGenerator`` and by ``Warmer``'s worker threads.
package final class ThumbnailFactory: Sendable {
    package let store: ThumbnailStore
    package let types: ContentTypeRegistry
    /// `types.stamp` once known (bit 32 set): taken on first use, as only a warm needs it.
    private let stamp = Atomic<UInt64>(0)
    private let providers: [ContentType: any ThumbnailProvider]
    private let icons = Mutex<[String: (ThumbnailHeader, [UInt8])]>([:])
    private let renders = Atomic<Int>(0)
    private let imports = Atomic<Int>(0)

    /// `types.stamp`: what the stat cache's kept types are checked against. Computed on first
    /// use (two threads may both compute it; they agree), not at every generator's start.
    package var typeStamp: UInt32 {
        let known = stamp.load(ordering: .relaxed)
        if known != 0 { return UInt32(truncatingIfNeeded: known) }
        let computed = types.stamp
        stamp.store(1 << 32 | UInt64(computed), ordering: .relaxed)
        return computed
    }

    /// How many thumbnails were rendered from files (not from a larger image) by this factory.
    package var renderCount: Int { renders.load(ordering: .relaxed) }

    /// How many thumbnails were made from another program's standard thumbnail instead of the file.
    package var importCount: Int { imports.load(ordering: .relaxed) }

    package func countImport() { imports.add(1, ordering: .relaxed) }

    package init(store: ThumbnailStore, types: ContentTypeRegistry = ContentTypeRegistry(),
                providers: [any ThumbnailProvider] = [ImageThumbnailProvider()]) {
        self.store = store
        self.types = types
        var map: [ContentType: any ThumbnailProvider] = [:]
        // Later providers win, so an app's provider can replace a built-in one.
        for p in providers { for t in p.contentTypes { map[t] = p } }
        self.providers = map
    }

    /// The type the file's name promises when its bytes are text or something without a provider
    /// (`photo.jpg` that holds an HTML error page): a failure to report, not a page of text.
    package func brokenPromise(path: String, type: ContentType) -> ContentType? {
        guard providers[type] == nil || TextTypes.isText(type) else { return nil }
        let name = FilePaths.lastComponent(path)
        guard let named = types.type(forFilename: name), named != type, !TextTypes.isText(named),
              providers[named] != nil else { return nil }
        return named
    }

    /// The provider registered for exactly `type`, if any.
    package func provider(for type: ContentType) -> (any ThumbnailProvider)? { providers[type] }

    /// The version a failure of `type`'s content is recorded under: the generator's, or for a
    /// `.thumbnailer` plug-in one of its own, so that another plug-in tries the bytes again.
    package func failureVersion(for type: ContentType) -> UInt32 {
        if let version = (providers[type] as? ThumbnailerPluginProvider)?.failureVersion(for: type) { return version }
        return ThumbnailGenerator.pagedByWords.contains(type.identifier) ? Self.wordsDocumentFailureVersion : thumbnailGeneratorVersion
    }

    /// The failure version of office files and e-books: 2 since one without a stored picture has
    /// its first page of words as its thumbnail, so the "no picture" recorded before is tried again.
    static let wordsDocumentFailureVersion: UInt32 = 2

    /// The full thumbnail of the file, fitted to `spec`'s box (not stored).
    package func render(path: String, type: ContentType, spec: ThumbnailSpec, decoding: (any ImageDecoding)? = nil,
                        header: DecodedHeader? = nil) throws -> RGBAImage {
        guard let provider = providers[type] else { throw GenerationError(path: path, reason: .noProvider(type)) }
        // Only the built-in decoders draw pages; another provider's file has the one it draws.
        guard spec.page == 0 || provider is ImageThumbnailProvider else {
            throw ImagingError(path: path, reason: .noSuchPage(page: spec.page + 1, pages: 1))
        }
        renders.add(1, ordering: .relaxed)
        var request = ThumbnailProviderRequest(path: path, contentType: type, maximumWidth: spec.boxWidth,
                                               maximumHeight: spec.boxHeight, scale: spec.scale, mode: spec.mode,
                                               linearLight: spec.linearLight)
        request.page = spec.page
        request.decoding = decoding
        request.decodedHeader = header
        let image: RGBAImage
        switch try provider.provideThumbnail(for: request) {
        case .pixels(let pixels):
            image = pixels
        case .drawing(let width, let height, let draw):
            // Drawn at its own size and resized like pixels, so a fill crop sees the whole drawing;
            // capped so a provider cannot ask for unbounded memory.
            let cap = 4 * max(spec.boxWidth, spec.boxHeight)
            var canvas = RGBACanvas(width: max(1, min(width, cap)), height: max(1, min(height, cap)))
            try draw(&canvas)
            image = canvas.image
        case .imageFile(let file):
            let options = ThumbnailOptions(maxWidth: spec.boxWidth, maxHeight: spec.boxHeight, mode: spec.mode, linearLight: spec.linearLight)
            image = try Thumbnailer.thumbnail(ofFileAt: file, options: options).image
        }
        return Self.resize(image, to: spec)
    }

    /// `image` shrunk (never enlarged) to `spec`'s box: fitted, or filled and centre-cropped, as
    /// its mode says (the mode is part of the key the result is stored under).
    package static func resize(_ image: RGBAImage, to spec: ThumbnailSpec) -> RGBAImage {
        Thumbnailer.resize(image, options: ThumbnailOptions(maxWidth: spec.boxWidth, maxHeight: spec.boxHeight, mode: spec.mode,
                                                            linearLight: spec.linearLight))
    }

    /// Header and PNG bytes to store for `image`.
    package func encode(_ image: RGBAImage, kind: RepresentationKind, spec: ThumbnailSpec, sourceType: ContentType) throws -> (ThumbnailHeader, [UInt8]) {
        let bytes = try ImageEncoder.png(image)
        let header = ThumbnailHeader(encoding: .png, kind: kind, hasAlpha: image.hasAlpha, pixelWidth: UInt32(image.width),
                                     pixelHeight: UInt32(image.height), scale: Float(spec.scale),
                                     created: StoreClock.nowNanoseconds(), sourceContentType: sourceType.identifier)
        return (header, bytes)
    }

    /// Header and bytes to store for a preview: JPEG when opaque (a PDF's page at 1024 points: 150
    /// KB against our PNG's 405 KB, text still crisp at its quality), else PNG.
    package func encodePreview(_ image: RGBAImage, spec: ThumbnailSpec, sourceType: ContentType) throws -> (ThumbnailHeader, [UInt8]) {
        let jpeg = !image.hasAlpha
        let bytes = jpeg ? try ImageEncoder.jpeg(image, quality: Self.previewQuality) : try ImageEncoder.png(image)
        let header = ThumbnailHeader(encoding: jpeg ? .jpeg : .png, kind: .preview, hasAlpha: image.hasAlpha, pixelWidth: UInt32(image.width),
                                     pixelHeight: UInt32(image.height), scale: Float(spec.scale),
                                     created: StoreClock.nowNanoseconds(), sourceContentType: sourceType.identifier)
        return (header, bytes)
    }

    /// A preview's JPEG quality: text at screen size stays crisp at it.
    package static let previewQuality = 90

    /// The generic icon for `type` in `spec`'s box (drawn once per family and size, kept in memory).
    package func icon(for type: ContentType, spec: ThumbnailSpec) -> (ThumbnailHeader, [UInt8]) {
        let family = Icons.family(of: type, in: types)
        let side = min(spec.boxWidth, spec.boxHeight)
        let key = "\(family.rawValue)-\(side)"
        if let known = icons.withLock({ $0[key] }) { return known }
        let image = Icons.draw(family, side: side)
        let made = (try? encode(image, kind: .icon, spec: spec, sourceType: type))
            ?? (ThumbnailHeader(encoding: .rgba8, kind: .icon, hasAlpha: true, pixelWidth: UInt32(image.width),
                                pixelHeight: UInt32(image.height), scale: Float(spec.scale), created: 0,
                                sourceContentType: type.identifier), image.pixels)
        icons.withLock { $0[key] = made }
        return made
    }
}
