import FoundationEssentials
import ThumbcacheSync
import Glibc
import Synchronization
import Thumbcache

/// What the server shows of the files under its roots: search, recents, tags, folders, one item,
/// and which contents may be shown at all. Every path it returns is inside the roots.
final class ServedFiles: Sendable {
    let roots: ServedRoots
    let index: MetadataIndex
    let generator: ThumbnailGenerator
    /// Warms the roots, and re-indexes a file whose tags were just written; it shares the
    /// generator's providers and worker pool (a tag edit starts no process).
    let warmer: Warmer
    var store: ThumbnailStore { generator.store }
    /// Contents met under the roots outside the index (a browsed folder's cached files, a
    /// `/thumbnail?path=` redirect): content → path, bounded.
    private let vouched = Mutex<[ContentHash: String]>([:])
    private static let vouchedLimit = 16384

    /// The most results a search returns, and the most files Recents and Tags look through.
    static let searchLimit = 1000
    static let scanLimit = 20000
    /// The attributes a grid tile shows.
    static let tileAttributes = [MDItem.fsName, MDItem.fsSize, MDItem.contentModificationDate, MDItem.lastUsedDate, MDItem.contentType,
                                 MDItem.userTags]

    init(roots: ServedRoots, index: MetadataIndex, generator: ThumbnailGenerator) {
        self.roots = roots
        self.index = index
        self.generator = generator
        warmer = Warmer(factory: generator.factory, sharedDecoding: generator.decoding)
    }

    /// Warms `paths` (thumbnails and index items).
    func warm(_ paths: [String]) async -> WarmSummary {
        await warmer.warm(paths, options: .init(jobs: paths.count == 1 ? 1 : Warmer.defaultJobs, index: index))
    }

    // MARK: Contents

    /// A file under the roots with this content, if the index or this server has met one: a
    /// thumbnail is never shown for content only known from elsewhere in the shared cache.
    func path(withContent content: ContentHash) throws -> String? {
        if let path = try index.paths(withContent: content.bytes).first(where: roots.contains) { return path }
        return vouched.withLock { $0[content] }
    }

    /// The content of the file at `path` (inside the roots), remembered for the URLs that name
    /// it: the stat cache answers first, and the file is read only if it does not know it.
    func identify(_ path: String) async throws -> ContentHash {
        let store = self.store
        let content: ContentHash = try await blocking {
            let snapshot = try FileSnapshot.of(path: path)
            guard snapshot.kind == .regular else { throw ServeError.badRequest("not a file: \(path)") }
            return try store.identify(fileAt: path, snapshot: snapshot, hasher: store.hasher()).content
        }
        vouch(content, path: path)
        return content
    }

    /// Remembers that `path` (inside the roots) has `content`.
    func vouch(_ content: ContentHash, path: String) {
        vouched.withLock { map in
            if map.count >= Self.vouchedLimit { map.removeAll(keepingCapacity: true) }
            map[content] = path
        }
    }

    // MARK: Searching

    /// A search limited to the roots (or the folders of `onlyIn`, each inside them).
    func search(_ query: String, onlyIn: [String] = [], limit: Int, attributes: [String]?) throws -> SearchResults {
        guard !query.trimmingWhitespace(newlines: false).isEmpty else { throw ServeError.badRequest("q is missing") }
        guard query.utf8.count <= 1024 else { throw ServeError.badRequest("q is longer than 1024 bytes") }
        let folders = onlyIn.isEmpty ? roots.paths : onlyIn
        return inRoots(try index.search(query, options: SearchOptions(onlyIn: folders, limit: limit, attributes: attributes, snippets: true)))
    }

    /// `results` without app items whose path is not under the roots (`onlyIn` keeps files there already).
    private func inRoots(_ results: SearchResults) -> SearchResults {
        var results = results
        results.results.removeAll { $0.path.map { !roots.contains($0) } ?? true }
        return results
    }

    /// Items whose `kMDItemUserTags` has `value` (a wildcard pattern) under the roots.
    private func tagSearch(_ value: String, limit: Int, attributes: [String]) throws -> SearchResults {
        let expression = QueryExpression.comparison(attribute: MDItem.userTags, op: .equal, value: .string(value, []), position: 0)
        return inRoots(try index.search(expression, options: SearchOptions(onlyIn: roots.paths, limit: limit, attributes: attributes)))
    }

    /// Files last used or modified, newest first.
    func recents(limit: Int) throws -> [SearchResult] {
        var found: [SearchResult] = []
        for query in ["kMDItemContentModificationDate >= $time.today(-30) || kMDItemLastUsedDate >= $time.today(-30)",
                      "kMDItemContentModificationDate >= $time.this_year(-1)", "kMDItemFSSize >= 0"] {
            found = try search(query, limit: Self.scanLimit, attributes: Self.tileAttributes).results
            if found.count >= limit { break }
        }
        func recency(_ r: SearchResult) -> Double {
            max(r.attributes[MDItem.contentModificationDate]?.numericValue ?? 0, r.attributes[MDItem.lastUsedDate]?.numericValue ?? 0)
        }
        return Array(found.sorted { recency($0) > recency($1) }.prefix(limit))
    }

    /// Every tag on a file under the roots, with how many files carry it, most used first.
    func tagCounts() throws -> [(tag: String, count: Int)] {
        var counts: [String: Int] = [:]
        for r in try tagSearch("*", limit: Self.scanLimit, attributes: [MDItem.userTags]).results {
            for t in Set(r.attributes[MDItem.userTags]?.stringValues ?? []) { counts[t, default: 0] += 1 }
        }
        return counts.map { ($0.key, $0.value) }.sorted { $0.count != $1.count ? $0.count > $1.count : $0.tag < $1.tag }
    }

    /// Files tagged `tag`.
    func tagged(_ tag: String, limit: Int) throws -> SearchResults {
        try tagSearch(tag, limit: limit, attributes: Self.tileAttributes)
    }

    /// The movie of the Live Photo whose still carries `identifier`: a served movie with the same
    /// content identifier, or nil.
    func livePhotoMovie(identifier: String) throws -> String? {
        // An identifier is a UUID: one with a wildcard's characters pairs with nothing (as search's pairing says).
        guard !identifier.contains(where: { "*?\\".contains($0) }) else { return nil }
        let expression = QueryExpression.and([
            .comparison(attribute: MDItem.livePhotoContentIdentifier, op: .equal, value: .string(identifier, []), position: 0),
            .comparison(attribute: MDItem.contentTypeTree, op: .equal, value: .string("public.movie", []), position: 0),
        ])
        let options = SearchOptions(onlyIn: roots.paths, limit: 1, attributes: [], pairsLivePhotos: false)
        return inRoots(try index.search(expression, options: options)).results.first?.path
    }

    /// Every indexed attribute of the file at `path` (a resolved path inside the roots).
    func item(path: String) throws -> SearchResult? { try index.item(path: path) }

    // MARK: Tags

    /// Adds or removes a tag on the file's `user.xdg.tags` and updates its index item before
    /// returning, so the next search sees it.
    func editTag(_ tag: String, add: Bool, path: String) async throws -> [String] {
        guard FileTags.isValid(tag) else {
            throw ServeError.badRequest("a tag must be 1 to 256 bytes, without commas, control characters or surrounding spaces")
        }
        let tags = try Self.writeTag(tag, add: add, path: path)
        _ = await warm([path])
        return tags
    }

    private static func writeTag(_ tag: String, add: Bool, path: String) throws(ServeError) -> [String] {
        do {
            if add { return try FileTags.add(tag, path: path) }
            return try FileTags.remove(tag, path: path)
        } catch {
            guard case .system(_, let errno) = error.reason else { throw ServeError(.internalServerError, "cannot write the tags of \(path)") }
            switch errno.rawValue {
            case EACCES, EPERM: throw ServeError(.forbidden, "cannot write the tags of \(path): permission denied")
            case ENOTSUP: throw ServeError(.conflict, "the file system of \(path) does not keep extended attributes")
            default: throw ServeError(.internalServerError, "cannot write the tags of \(path): \(errno)")
            }
        }
    }

    // MARK: Folders

    /// A file or folder as the page shows it (a tile), from a folder listing or a search result.
    struct Entry: Sendable {
        var path: String
        var name: String
        var isDirectory = false
        var size: UInt64?
        var modified: Double?
        var content: ContentHash?
        /// Where a search's words stand in the file's text.
        var snippet: TextSnippet?
    }

    /// The tiles of search results that have a path.
    static func entries(_ results: [SearchResult]) -> [Entry] {
        results.compactMap { r in
            guard let path = r.path else { return nil }
            let name: String
            if case .string(let n)? = r.attributes[MDItem.fsName] { name = n } else { name = FilePaths.lastComponent(path) }
            return Entry(path: path, name: name, size: r.attributes[MDItem.fsSize]?.numericValue.map { UInt64(max(0, $0)) },
                         modified: r.attributes[MDItem.contentModificationDate]?.numericValue, content: r.content, snippet: r.snippet)
        }
    }

    /// The folder's entries, folders first, then by name; hidden ones skipped; at most `limit`.
    func listing(_ directory: String, limit: Int) throws -> (entries: [Entry], total: Int) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw ServeError(.forbidden, "cannot list \(directory)")
        }
        var entries: [Entry] = []
        let visible = names.filter { !$0.hasPrefix(".") }
        // Folders this large are shown in part: a page is not the place for a million files.
        for name in visible.sorted(by: naturalOrder).prefix(Self.scanLimit) {
            let path = directory == "/" ? "/" + name : directory + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            var snapshot = FileSnapshot(st)
            if snapshot.kind == .symbolicLink {
                // A symbolic link leading out of the roots is not shown.
                guard let real = FilePaths.real(path), roots.holds(real: real),
                      let target = try? FileSnapshot.of(path: path) else { continue }
                snapshot = target
            }
            let isDirectory = snapshot.kind == .directory
            guard isDirectory || snapshot.kind == .regular else { continue }
            var content: ContentHash?
            // The stat cache's hash, never the file's bytes: a page view reads no file.
            if !isDirectory, let c = try? store.cachedContentHash(path: path, snapshot: snapshot) {
                content = c
                vouch(c, path: path)
            }
            entries.append(Entry(path: path, name: name, isDirectory: isDirectory, size: snapshot.size,
                                 modified: Double(snapshot.modificationTime) / 1e9, content: content))
        }
        entries.sort { $0.isDirectory != $1.isDirectory ? $0.isDirectory : false }
        return (Array(entries.prefix(limit)), visible.count)
    }
}

/// Names in the order a file manager lists them: letters without case, runs of digits by their
/// value ("photo 2" before "photo 10"), then byte order to break ties.
func naturalOrder(_ a: String, _ b: String) -> Bool {
    var i = a.lowercased().unicodeScalars[...], j = b.lowercased().unicodeScalars[...]
    func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 0x30 && s.value <= 0x39 }
    while let x = i.first, let y = j.first {
        if isDigit(x) && isDigit(y) {
            let p = i.prefix(while: isDigit), q = j.prefix(while: isDigit)
            i = i.dropFirst(p.count)
            j = j.dropFirst(q.count)
            // Without their leading zeros, a longer run is a larger number.
            let u = p.drop { $0 == "0" }, v = q.drop { $0 == "0" }
            if u.count != v.count { return u.count < v.count }
            if !u.elementsEqual(v) { return u.lexicographicallyPrecedes(v) { $0.value < $1.value } }
            continue
        }
        if x != y { return x.value < y.value }
        i = i.dropFirst()
        j = j.dropFirst()
    }
    if i.isEmpty != j.isEmpty { return i.isEmpty }
    return a < b
}
