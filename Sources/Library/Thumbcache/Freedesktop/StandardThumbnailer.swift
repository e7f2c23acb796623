import ThumbcacheImaging
import ThumbcacheRemote
import ThumbcacheStore
import ThumbcacheWorker

/// Makes one file's standard thumbnail at one size, as a thumbnail service does per URI: a
/// valid one is left as it is; else the store's thumbnail, else one made now (and stored), is
/// written to the freedesktop cache; a failure gets its `fail/` entry.
package final class StandardThumbnailer: Sendable {
    /// How a URI was answered.
    package enum Outcome: Sendable, Equatable {
        case alreadyValid
        case fromStore
        case made
    }

    /// Why a URI got no thumbnail, with the thumbnail service's error code.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// 0 unsupported type or scheme, 1 unreadable, 2 invalid format, 3 a thumbnail itself, 4 save failed.
        package var code: Int32
        package var reason: String
        package var description: String { reason }
    }

    package let factory: ThumbnailFactory
    package let decoding: any ImageDecoding
    package let cache: FreedesktopThumbnailCache
    private let writer: GroupCommitWriter
    /// The shared tier asked before decoding; what is made here is queued for its uploader.
    package let remote: RemoteCache?

    package init(factory: ThumbnailFactory, decoding: any ImageDecoding, cache: FreedesktopThumbnailCache, writer: GroupCommitWriter,
                 remote: RemoteCache? = nil) {
        self.factory = factory
        self.decoding = decoding
        self.cache = cache
        self.writer = writer
        self.remote = remote
    }

    /// The standard thumbnail of the file at `uri` (a `file://` URI) in `size`.
    package func thumbnail(uri: String, size: FreedesktopThumbnailCache.Size) throws(Failure) -> Outcome {
        guard let path = FileURI.path(of: uri) else { throw Failure(code: 0, reason: "\(uri): only local files (file://) are supported") }
        if path.hasPrefix(cache.directory + "/") { throw Failure(code: 3, reason: "\(path) is a thumbnail itself") }
        let snapshot: FileSnapshot
        do { snapshot = try FileSnapshot.of(path: path) } catch { throw Failure(code: 1, reason: "\(error)") }
        let source = FreedesktopThumbnailCache.Source(uri: uri, snapshot: snapshot)
        if FreedesktopThumbnailCache.isValid(thumbnailAt: cache.path(forURI: uri, size: size), for: source) { return .alreadyValid }
        let store = factory.store
        let id: FileIdentity
        do { id = try store.identify(fileAt: path, snapshot: snapshot, hasher: store.hasher()) } catch { throw Failure(code: 1, reason: "\(error)") }
        var writes: [StoreWrite] = id.fromCache ? [] : [.file(path: path, snapshot: id.snapshot, content: id.content)]
        defer { if !writes.isEmpty { writer.enqueue(writes) { _ in } } }
        let spec = ThumbnailSpec(size: size.pixels)
        let image: RGBAImage
        let outcome: Outcome
        // The stored thumbnail says what its source was: the file is opened only to make one.
        let type: ContentType
        do {
            if let record = try store.thumbnail(spec.key(for: id.content)) {
                image = try record.image()
                type = ContentType(record.header.sourceContentType)
                outcome = .fromStore
            } else {
                type = factory.types.type(ofFileAt: path)
                image = try make(spec, path: path, id: id, type: type, writes: &writes)
                outcome = .made
            }
        } catch let failure as Failure {
            try? cache.writeFailure(for: source)
            throw failure
        } catch {
            try? cache.writeFailure(for: source)
            throw Failure(code: 2, reason: "\(path): \(error)")
        }
        do {
            try cache.write(image, for: source, size: size, mimeType: factory.types.mimeType(of: type))
        } catch {
            throw Failure(code: 4, reason: "\(error)")
        }
        return outcome
    }

    private func make(_ spec: ThumbnailSpec, path: String, id: FileIdentity, type: ContentType, writes: inout [StoreWrite]) throws -> RGBAImage {
        if let named = factory.brokenPromise(path: path, type: type) {
            throw Failure(code: 2, reason: "\(path): \(GenerationError.Reason.notWhatItsNameSays(named: named, content: type))")
        }
        let pipeline = ThumbnailPipeline(factory: factory, decoding: decoding, header: remote == nil ? nil : DecodedHeader(), remote: remote)
        guard case .success(let specs) = pipeline.plan(type: type, specs: [spec]) else {
            throw Failure(code: 0, reason: "\(path): no thumbnailer for \(factory.types.mimeType(of: type) ?? type.identifier)")
        }
        let made = pipeline.make(specs, path: path, content: id.content, type: type, sourceBytes: Int64(clamping: id.snapshot.size))
        writes += made.writes(content: id.content)
        if let record = made.failedBefore { throw Failure(code: 2, reason: "\(path): \(record.reason) (recorded earlier)") }
        if let failure = made.failure { throw Failure(code: 2, reason: "\(path): \(ThumbnailPipeline.reason(failure))") }
        guard let image = made.firstImage else { throw Failure(code: 0, reason: "\(path): no thumbnail") }
        return image
    }
}
