import Foundation
import Hummingbird
import Thumbcache
import ThumbcacheSync

/// `GET /thumbnails/{content-hash}` (immutable: the URL names the bytes) and `GET /thumbnail?path=`
/// (a redirect to the immutable URL of the file's current content).
struct ThumbnailEndpoints: Sendable {
    let files: ServedFiles
    let hot: HotThumbnails

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

    func thumbnail(_ hash: Substring, _ request: Request) async throws -> Response {
        guard hash.utf8.count == 32, hash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
              let content = ContentHash(hex: hash)
        else { throw ServeError.badRequest("not a content hash (32 lowercase hex digits)") }
        let fields = try FormFields(request.uri.query?[...])
        let size = try fields.integer("size", default: 256, in: Self.sizes)
        let scale = try fields.number("scale", default: 1, in: Self.scales)
        let spec = ThumbnailSpec(size: size, scale: scale)
        let key = spec.key(for: content)
        if let hit = hot.entry(key) { return Self.respond(hit, request) }
        let etag = "\"\(content.hex)-\(spec.boxWidth)-\(thumbnailGeneratorVersion)\""
        guard let path = try files.path(withContent: content) else {
            throw ServeError.notFound("no file in the served folders has this content")
        }
        if let tags = request.headers[.ifNoneMatch], Self.matches(tags, etag) {
            return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: Self.immutable])
        }
        if let stored = try stored(key) { return Self.respond(remember(key, stored, etag), request) }
        // Made on demand from the file that has this content now; served only if it was stored
        // under this very key (the file may have changed since the index saw it).
        let wanted = ThumbnailRequest(fileAt: path, size: Double(size), scale: scale, representationTypes: [.thumbnail, .icon])
        let made: ThumbnailRepresentation
        do {
            made = try await files.generator.bestRepresentation(for: wanted)
        } catch {
            throw ServeError.notFound("no thumbnail can be made of this content")
        }
        if let stored = try stored(key) { return Self.respond(remember(key, stored, etag), request) }
        guard made.kind == .icon else { throw ServeError.notFound("the file with this content has changed") }
        return Self.image((.png, ByteBuffer(bytes: try made.pngData())), etag: nil, caching: Self.provisional)
    }

    func redirect(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        let size = try fields.integer("size", default: 256, in: Self.sizes)
        let scale = try fields.number("scale", default: 1, in: Self.scales)
        let files = self.files
        let content: ContentHash = try await blocking {
            let snapshot = try FileSnapshot.of(path: path)
            guard snapshot.kind == .regular else { throw ServeError.badRequest("not a file: \(path)") }
            return try files.cachedContent(path: path, snapshot: snapshot)
                ?? files.store.identify(fileAt: path, snapshot: snapshot, hasher: files.store.hasher()).content
        }
        files.vouch(content, path: path)
        return Response(status: .found, headers: [.location: Self.url(content, size: size, scale: scale), .cacheControl: "no-cache"])
    }

    private func stored(_ key: ThumbnailKey) throws -> (ThumbnailEncoding, ByteBuffer)? {
        try files.store.withThumbnail(key) { view -> (ThumbnailEncoding, ByteBuffer) in
            if view.header.encoding == .rgba8 { return (.png, ByteBuffer(bytes: try ImageEncoder.png(view.copy().image()))) }
            return (view.header.encoding, ByteBuffer(bytes: view.data))
        }
    }

    private func remember(_ key: ThumbnailKey, _ stored: (ThumbnailEncoding, ByteBuffer), _ etag: String) -> HotThumbnails.Entry {
        let entry = HotThumbnails.Entry(body: stored.1, contentType: stored.0 == .jpeg ? "image/jpeg" : "image/png", etag: etag,
                                        checked: MonotonicClock.coarseNanoseconds())
        hot.insert(key, entry)
        return entry
    }

    private static func respond(_ entry: HotThumbnails.Entry, _ request: Request) -> Response {
        if let tags = request.headers[.ifNoneMatch], matches(tags, entry.etag) {
            return Response(status: .notModified, headers: [.eTag: entry.etag, .cacheControl: immutable])
        }
        return Response(status: .ok, headers: [.contentType: entry.contentType, .cacheControl: immutable, .eTag: entry.etag],
                        body: ResponseBody(byteBuffer: entry.body))
    }

    private static func image(_ stored: (ThumbnailEncoding, ByteBuffer), etag: String?, caching: String) -> Response {
        var headers: HTTPFields = [.contentType: stored.0 == .jpeg ? "image/jpeg" : "image/png", .cacheControl: caching]
        if let etag { headers[.eTag] = etag }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: stored.1))
    }

    /// `If-None-Match`: `*`, or a list of (possibly weak) entity tags.
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { item in
            var t = item.trimmingCharacters(in: .whitespaces)[...]
            if t.hasPrefix("W/") { t = t.dropFirst(2) }
            return t == "*" || t == etag
        }
    }
}
