import Hummingbird
import Thumbcache
import ThumbcacheSync

/// `GET /previews/{content-hash}?page=&size=` (immutable, like a thumbnail's URL: it names the
/// bytes and the page) and `GET /preview?path=&page=` (a redirect to it).
struct PreviewEndpoints: Sendable {
    let files: ServedFiles
    let hot: HotThumbnails

    static let sizes = 64...2048
    static let defaultSize = 1024
    static let scales = 1.0...2.0

    /// The URL of page `page` (from 1) of `content`'s preview.
    static func url(_ content: ContentHash, page: Int = 1, size: Int = defaultSize) -> String {
        "/previews/\(content.hex)?page=\(page)" + (size == defaultSize ? "" : "&size=\(size)")
    }

    /// The redirecting URL for a file whose content is not known yet.
    static func url(path: String, page: Int = 1) -> String {
        "/preview?path=\(URLText.query(path))&page=\(page)"
    }

    /// What a query asks: the page (from 1), the size in points and the scale.
    static func parse(_ fields: FormFields) throws(ServeError) -> (page: Int, size: Int, scale: Double) {
        (try fields.integer("page", default: 1, in: 1...Int(ThumbnailVariant.pageLimit)), try fields.integer("size", default: defaultSize, in: sizes),
         try fields.number("scale", default: 1, in: scales))
    }

    func preview(_ hash: Substring, _ request: Request) async throws -> Response {
        let content = try ThumbnailEndpoints.parse(hash: hash, query: nil).content
        let (page, size, scale) = try Self.parse(FormFields(request.uri.query?[...]))
        var asked = ThumbnailRequest(fileAt: "", size: Double(size), scale: scale, representationTypes: .preview)
        asked.page = page - 1
        let spec = asked.previewSpec
        let key = spec.key(for: content, kind: .preview)
        let held = hot.lookup(key)
        if let held, held.fresh { return try ThumbnailEndpoints.respond(held.entry, request) }
        guard let path = try files.path(withContent: content) else {
            throw ServeError.notFound("no file in the served folders has this content")
        }
        if let held {
            hot.confirm(key)
            return try ThumbnailEndpoints.respond(held.entry, request)
        }
        let etag = "\"\(content.hex)-p\(page)-\(spec.boxWidth)-\(previewGeneratorVersion)\""
        if let unchanged = ThumbnailEndpoints.notModified(etag, request) { return unchanged }
        if let stored = try ThumbnailEndpoints.stored(key, etag: etag, files: files, hot: hot) {
            return try ThumbnailEndpoints.respond(stored, request)
        }
        // Made on demand from the file that has this content now; served only if it was stored
        // under this very key (the file may have changed since the index saw it).
        asked.path = path
        do {
            _ = try await files.generator.bestRepresentation(for: asked)
        } catch let error as ImagingError {
            if case .noSuchPage = error.reason { throw ServeError.notFound(error.reason.description) }
            throw ServeError.notFound("no preview can be made of this content")
        } catch {
            throw ServeError.notFound("no preview can be made of this content")
        }
        guard let stored = try ThumbnailEndpoints.stored(key, etag: etag, files: files, hot: hot) else {
            throw ServeError.notFound("the file with this content has changed")
        }
        return try ThumbnailEndpoints.respond(stored, request)
    }

    func redirect(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        let (page, size, _) = try Self.parse(fields)
        let content = try await files.identify(path)
        return Response(status: .found, headers: [.location: Self.url(content, page: page, size: size), .cacheControl: "no-cache"])
    }
}
