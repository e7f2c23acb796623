import ThumbcacheSync
import Hummingbird
import Thumbcache

/// The page: Recents at `/`, `/browse`, `/tagged`, `/find`, `/item`, and the no-JavaScript tag form.
struct PageEndpoints: Sendable {
    let files: ServedFiles
    let renderer: PageRenderer
    /// Tiles a page shows at most.
    static let tileLimit = 500

    func recents(_ request: Request) async throws -> Response {
        let files = self.files
        let recent = try await blocking { try files.recents(limit: 120) }
        let body = renderer.grid(ServedFiles.entries(recent), empty: "Nothing indexed yet: run `thumbcache warm` on a served folder.")
        return Self.html(renderer.page("Recents", section: .recents, body: body))
    }

    func browse(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        guard let raw = fields["path"] else {
            let tiles = files.roots.roots.map { ServedFiles.Entry(path: $0.real, name: $0.given, isDirectory: true) }
            return Self.html(renderer.page("Folders", section: .browse, body: renderer.grid(tiles, empty: "")))
        }
        let path = try files.roots.resolve(raw)
        guard FilePaths.isDirectory(path) else {
            return Response(status: .seeOther, headers: [.location: "/item?path=\(URLText.query(path))"])
        }
        let files = self.files
        let (tiles, total) = try await blocking { try files.listing(path, limit: Self.tileLimit) }
        var body = files.roots.root(of: path).map { renderer.breadcrumbs(path, root: $0) } ?? ""
        body += renderer.grid(tiles, empty: "This folder is empty.")
        if total > tiles.count { body += "<p class=\"more\">\(tiles.count) of \(total) shown.</p>" }
        return Self.html(renderer.page(FilePaths.lastComponent(path), section: .browse, body: body))
    }

    func tagged(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let files = self.files
        guard let tag = fields["tag"], !tag.isEmpty else {
            let counts = try await blocking { try files.tagCounts() }
            return Self.html(renderer.page("Tags", section: .tags, body: renderer.tagList(counts)))
        }
        let results = try await blocking { try files.tagged(tag, limit: Self.tileLimit) }
        let body = renderer.grid(ServedFiles.entries(results.results), empty: "No file is tagged \(tag).")
        return Self.html(renderer.page("Tagged “\(tag)”", section: .tags, body: body))
    }

    func find(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let query = fields["q"] ?? ""
        guard !query.trimmingWhitespace(newlines: false).isEmpty else {
            return Self.html(renderer.page("Search", section: .search, body: "<p class=\"empty\">Type words (a name, a tag, a title) or a query such as "
                + "<code>kMDItemPixelWidth &gt;= 4000</code>.</p>"))
        }
        let files = self.files
        let body: String
        do {
            let results = try await blocking { try files.search(query, limit: Self.tileLimit, attributes: ServedFiles.tileAttributes) }
            body = "<p class=\"count\">\(results.count) found</p>" + renderer.grid(ServedFiles.entries(results.results), empty: "Nothing matches.")
        } catch let error as QueryError {
            body = "<p class=\"error\">\(PageRenderer.escape(error.message)) (at character \(error.position + 1))</p>"
        }
        return Self.html(renderer.page("Search", section: .search, query: query, body: body))
    }

    func item(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        let page = try fields.integer("page", default: 1, in: 1...Int(ThumbnailVariant.pageLimit))
        let found = try files.item(path: path)
        let attributes = found?.attributes ?? [:]
        let movie = try attributes[MDItem.livePhotoContentIdentifier]?.stringValues?.first.flatMap { try files.livePhotoMovie(identifier: $0) }
        let body = renderer.item(path, content: found?.content, attributes: attributes, tags: FileTags.read(path: path), page: page,
                                 livePhotoMovie: movie == path ? nil : movie)
        return Self.html(renderer.page(FilePaths.lastComponent(path), section: .item, body: body))
    }

    /// The tag form's post: adds or removes, then back to the item (303, so a reload does not post again).
    func editTag(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: FormFields.maximumBytes)
        let fields = try FormFields(String(buffer: body)[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        guard let tag = fields["tag"] else { throw ServeError.badRequest("tag is missing") }
        _ = try await files.editTag(tag, add: fields["action"] != "remove", path: path)
        return Response(status: .seeOther, headers: [.location: "/item?path=\(URLText.query(path))"])
    }

    static func html(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=86400"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
