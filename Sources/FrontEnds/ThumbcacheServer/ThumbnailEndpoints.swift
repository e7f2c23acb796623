import Hummingbird
import NIOHTTPTypesHTTP1
import Thumbcache
import ThumbcacheSync

/// `GET /thumbnails/{content-hash}` (immutable: the URL names the bytes) and `GET /thumbnail?path=`
/// (a redirect to the immutable URL of the file's current content).
struct ThumbnailEndpoints: Sendable {
    let files: ServedFiles
    let hot: HotThumbnails
    let redirect: RemoteRedirect?

    /// A year, as long as caches keep anything; the URL can never name other bytes.
    static let immutable = "public, max-age=31536000, immutable"
    /// The icon stands in until a thumbnail can be made (a failure may be retried later).
    static let provisional = "public, max-age=300"
    static let sizes = 16...1024
    static let scales = 1.0...4.0

    /// The URL of the thumbnail of `content`.
    static func url(_ content: ContentHash, size: Int, scale: Double = 1) -> String {
        "/thumbnails/\(content.hex)?size=\(size)" + (scale == 1 ? "" : "&scale=\(AttributeFormat.number(scale))")
    }

    /// The redirecting URL for a file whose content is not known yet.
    static func url(path: String, size: Int, scale: Double = 1) -> String {
        "/thumbnail?path=\(URLText.query(path))&size=\(size)" + (scale == 1 ? "" : "&scale=\(AttributeFormat.number(scale))")
    }

    /// The content and size a `/thumbnails/{hash}?size=&scale=` URL names.
    static func parse(hash: Substring, query: Substring?) throws(ServeError) -> (content: ContentHash, size: Int, scale: Double) {
        guard hash.utf8.count == 32, hash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
              let content = ContentHash(hex: hash)
        else { throw ServeError.badRequest("not a content hash (32 lowercase hex digits)") }
        let (size, scale) = try sizeAndScale(FormFields(query))
        return (content, size, scale)
    }

    /// A query's `size` (points, 256 when absent) and `scale` (1 when absent).
    static func sizeAndScale(_ fields: FormFields) throws(ServeError) -> (size: Int, scale: Double) {
        (try fields.integer("size", default: 256, in: sizes), try fields.number("scale", default: 1, in: scales))
    }

    func thumbnail(_ hash: Substring, _ request: Request) async throws -> Response {
        let (content, size, scale) = try Self.parse(hash: hash, query: request.uri.query?[...])
        let spec = ThumbnailSpec(size: size, scale: scale)
        let key = spec.key(for: content)
        let held = hot.lookup(key)
        if let held, held.fresh { return try Self.respond(held.entry, request) }
        let etag = "\"\(content.hex)-\(spec.boxWidth)-\(thumbnailGeneratorVersion)\""
        guard let path = try files.path(withContent: content) else {
            throw ServeError.notFound("no file in the served folders has this content")
        }
        // Under the roots (checked above), and the remote tier has it: its store sends the bytes.
        if let redirect, let (location, maxAge) = try await blocking({ redirect.location(for: key) }) {
            return Response(status: .found, headers: [.location: location, .cacheControl: "public, max-age=\(maxAge)"])
        }
        // Still under the roots: the bytes held need not be read again.
        if let held {
            hot.confirm(key)
            return try Self.respond(held.entry, request)
        }
        // Revalidation needs no bytes: the ETag is the URL's.
        if let unchanged = Self.notModified(etag, request) { return unchanged }
        if let stored = try Self.stored(key, etag: etag, files: files, hot: hot) { return try Self.respond(stored, request) }
        // Made on demand from the file that has this content now; served only if it was stored
        // under this very key (the file may have changed since the index saw it).
        let wanted = ThumbnailRequest(fileAt: path, size: Double(size), scale: scale, representationTypes: [.thumbnail, .icon])
        let made: ThumbnailRepresentation
        do {
            made = try await files.generator.bestRepresentation(for: wanted)
        } catch {
            throw ServeError.notFound("no thumbnail can be made of this content")
        }
        if let stored = try Self.stored(key, etag: etag, files: files, hot: hot) { return try Self.respond(stored, request) }
        guard made.kind == .icon else { throw ServeError.notFound("the file with this content has changed") }
        return Response(status: .ok, headers: [.contentType: "image/png", .cacheControl: Self.provisional],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: try made.pngData())))
    }

    func redirect(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        let (size, scale) = try Self.sizeAndScale(fields)
        let content = try await files.identify(path)
        return Response(status: .found, headers: [.location: Self.url(content, size: size, scale: scale), .cacheControl: "no-cache"])
    }

    /// The stored thumbnail (or preview) for `key`, kept in memory from now on.
    static func stored(_ key: ThumbnailKey, etag: String, files: ServedFiles, hot: HotThumbnails) throws -> HotThumbnails.Entry? {
        let found = try files.store.withThumbnail(key) { view -> (String, ByteBuffer) in
            switch view.header.encoding {
            case .rgba8: ("image/png", ByteBuffer(bytes: try ImageEncoder.png(view.copy().image())))
            case .jpeg: ("image/jpeg", ByteBuffer(bytes: view.data))
            case .png: ("image/png", ByteBuffer(bytes: view.data))
            }
        }
        guard let (type, body) = found else { return nil }
        let entry = HotThumbnails.Entry(body: body, contentType: type, etag: etag, checked: MonotonicClock.coarseNanoseconds())
        hot.insert(key, entry)
        return entry
    }

    static func respond(_ entry: HotThumbnails.Entry, _ request: Request) throws -> Response {
        if let unchanged = notModified(entry.etag, request) { return unchanged }
        guard let body = entry.body() else { throw ServeError(.internalServerError, "a held thumbnail could not be read back") }
        return Response(status: .ok, headers: HTTPFields(entry.headers, splitCookie: false), body: ResponseBody(byteBuffer: body))
    }

    /// A `304`'s headers.
    static func notModifiedFields(_ etag: String) -> HTTPFields { [.eTag: etag, .cacheControl: immutable] }

    /// `304` if the request's `If-None-Match` names `etag`.
    static func notModified(_ etag: String, _ request: Request) -> Response? {
        guard let tags = request.headers[.ifNoneMatch], matches(tags, etag) else { return nil }
        return Response(status: .notModified, headers: notModifiedFields(etag))
    }

    /// `If-None-Match`: `*`, or a list of (possibly weak) entity tags.
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { item in
            var t = item.trimmingWhitespace(newlines: false)[...]
            if t.hasPrefix("W/") { t = t.dropFirst(2) }
            return t == "*" || t == etag
        }
    }
}
