import Foundation
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
        let names = fields.all("attrs").flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty }
        guard names.count <= 64 else { throw ServeError.badRequest("at most 64 attributes") }
        let files = self.files
        let results: SearchResults
        do {
            results = try await blocking { try files.search(query, onlyIn: onlyIn, limit: limit, attributes: names.isEmpty ? nil : names) }
        } catch let error as QueryError {
            throw ServeError.badRequest("\(error.message) (at character \(error.position + 1))")
        }
        let list = results.results.map { r -> [String: Any] in
            var o = AttributeFormat.json(r)
            if let c = r.content { o["thumbnail"] = ThumbnailEndpoints.url(c, size: thumbnailSize) }
            return o
        }
        return try Self.json(["count": results.count, "results": list])
    }

    /// `GET /info?path=…`: every indexed attribute of one file.
    func info(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        guard let item = try files.item(path: path) else {
            throw ServeError.notFound("not in the index: \(path) (run `thumbcache warm` on its folder)")
        }
        return try Self.json(AttributeFormat.json(item))
    }

    /// `GET /tags`: every tag under the roots with its count.
    func tags(_ request: Request) async throws -> Response {
        let files = self.files
        let counts = try await blocking { try files.tagCounts() }
        return try Self.json(["tags": counts.map { ["tag": $0.tag, "count": $0.count] as [String: Any] }])
    }

    /// `PUT /tags?path=…&tag=…` adds a tag, `DELETE` removes it: the file's `user.xdg.tags`, then its index item.
    func editTag(_ request: Request, add: Bool) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        guard let tag = fields["tag"] else { throw ServeError.badRequest("tag is missing") }
        let tags = try await files.editTag(tag, add: add, path: path)
        return try Self.json(["path": path, "tags": tags])
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
