import ThumbcacheSync
import Hummingbird
import Thumbcache

/// The JSON API: `GET /search`, `GET /info`, `GET /tags`, `PUT` and `DELETE /tags`.
struct QueryEndpoints: Sendable {
    let files: ServedFiles
    /// Thumbnail size in the results' `thumbnail` URLs.
    let thumbnailSize: Int

    /// `GET /search?q=…&onlyin=…&limit=…&attrs=…`: `thumbcache search --json`'s answer, each
    /// result with its thumbnail's URL.
    func search(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let query = fields["q"] ?? ""
        let onlyIn = try fields.all("onlyin").map(files.roots.resolve)
        let limit = try fields.integer("limit", default: 100, in: 0...ServedFiles.searchLimit)
        let names = fields.all("attrs").flatMap { $0.split(separator: ",").map { $0.trimmingWhitespace(newlines: false) } }.filter { !$0.isEmpty }
        guard names.count <= 64 else { throw ServeError.badRequest("at most 64 attributes") }
        let files = self.files
        let results: SearchResults
        do {
            results = try await blocking { try files.search(query, onlyIn: onlyIn, limit: limit, attributes: names.isEmpty ? nil : names) }
        } catch let error as QueryError {
            throw ServeError.badRequest("\(error.message) (at character \(error.position + 1))")
        }
        let size = thumbnailSize
        return Self.json { o in
            o.member("count", results.count)
            o.member("results") { $0.array { list in
                for r in results.results {
                    list.element { AttributeFormat.write(r, thumbnail: r.content.map { ThumbnailEndpoints.url($0, size: size) }, into: &$0) }
                }
            } }
        }
    }

    /// `GET /info?path=…`: every indexed attribute of one file.
    func info(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        guard let item = try files.item(path: path) else {
            throw ServeError.notFound("not in the index: \(path) (run `thumbcache warm` on its folder)")
        }
        var json = JSONText()
        AttributeFormat.write(item, into: &json)
        return Self.json(json)
    }

    /// `GET /tags`: every tag under the roots with its count.
    func tags(_ request: Request) async throws -> Response {
        let files = self.files
        let counts = try await blocking { try files.tagCounts() }
        return Self.json { o in
            o.member("tags") { $0.array { list in for c in counts { list.element { $0.object { $0.member("count", c.count); $0.member("tag", c.tag) } } } } }
        }
    }

    /// `PUT /tags?path=…&tag=…` adds a tag, `DELETE` removes it: the file's `user.xdg.tags`, then its index item.
    func editTag(_ request: Request, add: Bool) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        guard let tag = fields["tag"] else { throw ServeError.badRequest("tag is missing") }
        let tags = try await files.editTag(tag, add: add, path: path)
        return Self.json { o in
            o.member("path", path)
            o.member("tags", tags)
        }
    }

    /// A JSON object, its members (sorted by key) written by `members`.
    static func json(status: HTTPResponse.Status = .ok, _ members: (inout JSONText) -> Void) -> Response {
        var json = JSONText()
        json.object(members)
        return Self.json(json, status: status)
    }

    static func json(_ json: JSONText, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.bytes)))
    }
}
