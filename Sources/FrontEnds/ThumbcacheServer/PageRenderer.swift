import ThumbcacheSync
import Thumbcache

/// The HTML of the page: server-rendered, so browsing, searching and tagging work without
/// JavaScript; `page.js` only makes tagging quicker and adds keys.
struct PageRenderer: Sendable {
    /// Grid tiles' thumbnail size in points (2x from the same cache: a `warm`'s 256 px thumbnails).
    let tileSize: Int

    enum Section: String { case recents = "Recents", browse = "Browse", tags = "Tags", search = "Search", item = "Item" }

    func page(_ title: String, section: Section, query: String = "", body: String) -> String {
        let links: [(Section, String)] = [(.recents, "/"), (.browse, "/browse"), (.tags, "/tagged")]
        let nav = links.map { s, href in
            "<a href=\"\(href)\"" + (s == section ? " aria-current=\"page\"" : "") + ">\(s.rawValue)</a>"
        }.joined()
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escape(title)) · thumbcache</title><link rel="stylesheet" href="/assets/page.css?v=\(thumbcacheVersion)">
            <script src="/assets/page.js?v=\(thumbcacheVersion)" defer></script></head>
            <body><header><nav aria-label="Sections">\(nav)</nav>
            <form class="search" action="/find" method="get" role="search"><input type="search" name="q" value="\(Self.escape(query))" \
            placeholder="Search names, tags, or a query" aria-label="Search" accesskey="s"><button type="submit">Search</button></form></header>
            <main id="main"><h1>\(Self.escape(title))</h1>
            \(body)
            </main></body></html>
            """
    }

    func grid(_ tiles: [ServedFiles.Entry], empty: String) -> String {
        guard !tiles.isEmpty else { return "<p class=\"empty\">\(Self.escape(empty))</p>" }
        return "<ul class=\"grid\">" + tiles.map(tile).joined() + "</ul>"
    }

    private func tile(_ t: ServedFiles.Entry) -> String {
        let href = t.isDirectory ? "/browse?path=\(URLText.query(t.path))" : "/item?path=\(URLText.query(t.path))"
        var meta: [String] = []
        if !t.isDirectory, let size = t.size { meta.append(Self.bytes(size)) }
        if let m = t.modified { meta.append(Self.day(m)) }
        let picture =
            t.isDirectory
            ? "<span class=\"folder\" aria-hidden=\"true\"></span>"
            : image(t.content, path: t.path, size: tileSize, alt: "")
        let snippet = t.snippet.map { "<span class=\"snippet\">\(Self.highlighted($0))</span>" } ?? ""
        return "<li><a class=\"tile\" href=\"\(href)\">\(picture)<span class=\"name\">\(Self.escape(t.name))</span>"
            + "<span class=\"meta\">\(meta.joined(separator: " · "))</span>\(snippet)</a></li>"
    }

    /// A snippet's text, escaped, with its matched words in `<mark>`.
    static func highlighted(_ snippet: TextSnippet) -> String {
        snippet.marked(plain: escape, match: { "<mark>" + escape($0) + "</mark>" })
    }

    /// An `<img>` loaded lazily at the device's scale: immutable URLs when the content is known.
    func image(_ content: ContentHash?, path: String, size: Int, alt: String) -> String {
        let one = content.map { ThumbnailEndpoints.url($0, size: size) } ?? ThumbnailEndpoints.url(path: path, size: size)
        let two = content.map { ThumbnailEndpoints.url($0, size: size, scale: 2) } ?? ThumbnailEndpoints.url(path: path, size: size, scale: 2)
        return "<img src=\"\(Self.escape(one))\" srcset=\"\(Self.escape(one)) 1x, \(Self.escape(two)) 2x\" width=\"\(size)\" "
            + "height=\"\(size)\" loading=\"lazy\" decoding=\"async\" alt=\"\(Self.escape(alt))\">"
    }

    /// Image types every browser shows: the original is shown itself rather than a thumbnail.
    static let browserImages: Set<String> = ["public.jpeg", "public.png", "com.compuserve.gif", "org.webmproject.webp", "public.avif"]

    /// The look at a file the item page opens with, as Quick Look's: a movie or a recording that
    /// plays from the original (seeking by ranges), a Motion Photo's still with its movie (a Live
    /// Photo's with the movie file paired with it), an image a browser shows at its own size, else
    /// the preview of page `page` (from 1), with links to the pages either side when the file has
    /// more than one (arrow keys follow them).
    func viewer(_ path: String, content: ContentHash?, attributes: [String: AttributeValue], page: Int = 1, livePhotoMovie: String? = nil) -> String {
        let original = "/files?path=\(URLText.query(path))"
        let types = attributes[MDItem.contentTypeTree]?.stringValues ?? []
        let name = FilePaths.lastComponent(path)
        func preview(_ page: Int) -> String {
            content.map { PreviewEndpoints.url($0, page: page) } ?? PreviewEndpoints.url(path: path, page: page)
        }
        let open = "<p><a href=\"\(Self.escape(original))\">Open the original</a></p>"
        if types.contains("public.movie") {
            return "<video class=\"viewer\" controls preload=\"metadata\" poster=\"\(Self.escape(preview(1)))\" src=\"\(Self.escape(original))\" "
                + "aria-label=\"\(Self.escape(name))\"></video>" + open
        }
        if types.contains("public.audio") {
            return image(content, path: path, size: 256, alt: name)
                + "<audio class=\"viewer\" controls preload=\"metadata\" src=\"\(Self.escape(original))\" aria-label=\"\(Self.escape(name))\"></audio>" + open
        }
        let motion: String? = if case .number(1) = attributes[MDItem.isMotionPhoto] { original + "&part=motion" }
            else { livePhotoMovie.map { "/files?path=\(URLText.query($0))" } }
        if let motion {
            let still = attributes[MDItem.contentType]?.stringValues?.first.map(Self.browserImages.contains) == true ? original : preview(1)
            return "<img class=\"viewer\" src=\"\(Self.escape(still))\" alt=\"\(Self.escape(name))\">"
                + "<video class=\"viewer motion\" controls muted loop preload=\"metadata\" src=\"\(Self.escape(motion))\" "
                + "aria-label=\"The movie of \(Self.escape(name))\"></video>" + open
        }
        if let own = attributes[MDItem.contentType]?.stringValues?.first, Self.browserImages.contains(own) {
            return "<img class=\"viewer\" src=\"\(Self.escape(original))\" alt=\"\(Self.escape(name))\">" + open
        }
        let counted: Int? = if case .number(let n) = attributes[MDItem.numberOfPages], n >= 1 { Int(n) } else { nil }
        // An office file's or e-book's pages after the first are its words: not counted, so the
        // next page is offered until its preview is not found.
        let pages = counted ?? (types.contains(where: ThumbnailGenerator.pagedByWords.contains) ? Int.max : 1)
        let shown = min(max(1, page), pages)
        let picture = "<img class=\"viewer\" id=\"preview\" src=\"\(Self.escape(preview(shown)))\" alt=\"\(Self.escape(name)), page \(shown)\">"
        guard pages > 1 else { return picture + open }
        // Plain links, so paging works without JavaScript; page.js follows them with the arrow keys.
        func link(_ to: Int, _ rel: String, _ label: String) -> String {
            guard (1...pages).contains(to) else { return "<span class=\"page-link\" aria-disabled=\"true\">\(label)</span>" }
            return "<a class=\"page-link\" rel=\"\(rel)\" href=\"/item?path=\(URLText.query(path))&amp;page=\(to)\" "
                + "data-preview=\"\(Self.escape(preview(to)))\" data-page=\"\(to)\">\(label)</a>"
        }
        let count = counted.map { " of \($0)" } ?? ""
        return picture + "<nav class=\"pager\" aria-label=\"Pages\"\(counted.map { " data-pages=\"\($0)\"" } ?? "")>"
            + "\(link(shown - 1, "prev", "‹ Previous")) <span class=\"page-number\" aria-live=\"polite\">Page \(shown)\(count)</span> "
            + "\(link(shown + 1, "next", "Next ›"))</nav>" + open
    }

    /// One file: its picture, attributes and tags (forms that work without JavaScript).
    func item(_ path: String, content: ContentHash?, attributes: [String: AttributeValue], tags: [String], page: Int = 1,
              livePhotoMovie: String? = nil) -> String {
        let rows = attributes.sorted { $0.key < $1.key }.map { name, value in
            "<tr><th scope=\"row\">\(Self.escape(name))</th><td>\(Self.escape(AttributeFormat.text(value)))</td></tr>"
        }.joined()
        let tagItems = tags.map { tag in
            """
            <li><form method="post" action="/item/tags" class="tag-edit"><input type="hidden" name="path" value="\(Self.escape(path))">\
            <input type="hidden" name="tag" value="\(Self.escape(tag))"><input type="hidden" name="action" value="remove">\
            <span class="tag">\(Self.escape(tag))</span> <button type="submit" aria-label="Remove tag \(Self.escape(tag))">×</button></form></li>
            """
        }.joined()
        let parent = FilePaths.parent(path)
        return """
            <div class="item"><figure>\(viewer(path, content: content, attributes: attributes, page: page, livePhotoMovie: livePhotoMovie))</figure>
            <section aria-labelledby="tags-h"><h2 id="tags-h">Tags</h2><ul class="tags" id="tags">\(tagItems)</ul>
            <form method="post" action="/item/tags" class="tag-edit" id="add-tag"><input type="hidden" name="path" value="\(Self.escape(path))">\
            <input type="hidden" name="action" value="add"><label for="new-tag">Add a tag</label> \
            <input id="new-tag" name="tag" required maxlength="256" autocomplete="off"> <button type="submit">Add</button></form>
            <p class="error" role="alert" hidden></p>
            <p><a href="/browse?path=\(URLText.query(parent))">Show in its folder</a></p></section></div>
            <section aria-labelledby="attrs-h"><h2 id="attrs-h">Attributes</h2>\
            \(rows.isEmpty ? "<p class=\"empty\">Not in the index yet: run <code>thumbcache warm</code> on its folder.</p>" : "<table class=\"attributes\">\(rows)</table>")</section>
            """
    }

    func breadcrumbs(_ path: String, root: ServedRoots.Root) -> String {
        var crumbs = ["<a href=\"/browse\">Folders</a>"]
        var current = root.real
        crumbs.append("<a href=\"/browse?path=\(URLText.query(current))\">\(Self.escape(FilePaths.lastComponent(root.given)))</a>")
        for part in path.dropFirst(root.real.count).split(separator: "/") {
            current += "/" + part
            crumbs.append("<a href=\"/browse?path=\(URLText.query(current))\">\(Self.escape(String(part)))</a>")
        }
        return "<nav class=\"crumbs\" aria-label=\"Folder\">" + crumbs.joined(separator: " / ") + "</nav>"
    }

    func tagList(_ counts: [(tag: String, count: Int)]) -> String {
        guard !counts.isEmpty else {
            return "<p class=\"empty\">No tags yet. Open a file and add one; files tagged in Dolphin or Files show up after a warm.</p>"
        }
        return "<ul class=\"taglist\">" + counts.map {
            "<li><a href=\"/tagged?tag=\(URLText.query($0.tag))\"><span class=\"tag\">\(Self.escape($0.tag))</span> <span class=\"count\">\($0.count)</span></a></li>"
        }.joined() + "</ul>"
    }

    func errorPage(_ error: ServeError) -> String {
        page("\(error.status.code) \(error.status.reasonPhrase)", section: .item,
             body: "<p class=\"error\">\(Self.escape(error.message))</p><p><a href=\"/\">Back to Recents</a></p>")
    }

    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func bytes(_ n: UInt64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(n), unit = 0
        while value >= 1000 && unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(n) bytes" : fixed(value, places: value < 10 ? 1 : 0) + " " + units[unit]
    }

    static func day(_ seconds: Double) -> String {
        String(AttributeFormat.date(seconds).prefix(10))
    }
}
