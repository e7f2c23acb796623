import CThumbcacheFileInfo
import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheSync
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheServer

/// The pages, search, tags, the token and origin rules, originals and previews, and escape attempts
/// (ServeTests.swift has the fixture and the thumbnails' endpoint).
extension ServeTests {
    @Test func searchInfoAndThePageWithoutJavaScript() throws {
        let f = try Fixture()
        let server = try Server(f)
        let info = try server.get("/info?path=\(Self.q(f.root + "/sunset.jpg"))")
        #expect(info.status == 200)
        let attributes = info.json["attributes"] as? [String: Any] ?? [:]
        #expect(attributes["kMDItemPixelWidth"] as? Int == 800)
        #expect(attributes["kMDItemFSName"] as? String == "sunset.jpg")
        #expect(try server.get("/info?path=\(Self.q(f.root + "/nothing.jpg"))").status == 404)
        #expect(try server.get("/info").status == 400)

        // Spotlight's language, plain words, onlyin, limit and a bad query.
        let query = try server.get("/search?q=\(Self.q("kMDItemPixelWidth >= 600"))&limit=1")
        #expect(query.json["count"] as? Int == 2 && (query.json["results"] as? [Any])?.count == 1)
        let only = try server.get("/search?q=\(Self.q("kMDItemFSSize > 0"))&onlyin=\(Self.q(f.root + "/trip"))")
        #expect(only.json["count"] as? Int == 3)
        let bad = try server.get("/search?q=\(Self.q("kMDItemFSSize >"))")
        #expect(bad.status == 400 && (bad.json["error"] as? String)?.contains("character") == true)
        #expect(try server.get("/search?q=").status == 400)
        #expect(try server.get("/search?q=\(String(repeating: "a", count: 2000))").status == 400)
        #expect(try server.get("/search?q=beach&limit=100000").status == 400)

        // The page: plain HTML with links and forms, thumbnails at 1x and 2x, lazily.
        let recents = try server.get("/")
        #expect(recents.status == 200 && recents.header("content-type")?.hasPrefix("text/html") == true)
        #expect(recents.header("content-security-policy")?.contains("frame-ancestors 'none'") == true)
        #expect(recents.text.contains("sunset.jpg") && recents.text.contains("srcset=") && recents.text.contains("loading=\"lazy\""))
        #expect(recents.text.contains("<form class=\"search\" action=\"/find\" method=\"get\""))
        let browse = try server.get("/browse?path=\(Self.q(f.root))")
        #expect(browse.text.contains("href=\"/browse?path=\(Self.q(f.root + "/trip"))\""))
        #expect(!browse.text.contains("escape") && !browse.text.contains("link.png"), "links leading out are not listed")
        let roots = try server.get("/browse")
        #expect(roots.text.contains(f.root))
        let found = try server.get("/find?q=beach")
        #expect(found.text.contains("3 found") && found.text.contains("beach1.png"))
        // Words inside files: the page marks them in the passage (escaped), the API gives the passage's ranges.
        let words = try server.get("/find?q=towels")
        #expect(words.text.contains("notes.txt") && words.text.contains("&lt;pack&gt; <mark>towels</mark> &amp; sun cream"), "\(words.text)")
        let snippet = try #require((try server.get("/search?q=towels").json["results"] as? [[String: Any]])?.first?["snippet"] as? [String: Any])
        #expect(snippet["text"] as? String == "holiday plans: <pack> towels & sun cream" && snippet["matches"] as? [[Int]] == [[22, 28]])
        let item = try server.get("/item?path=\(Self.q(f.root + "/sunset.jpg"))")
        #expect(item.text.contains("kMDItemPixelWidth") && item.text.contains("action=\"/item/tags\""))
        // Every image the pages show loads.
        for page in [recents, browse, found, item] {
            for src in Self.imageSources(page.text) {
                var reply = try server.get(src)
                if reply.status == 302, let next = reply.header("location") { reply = try server.get(next) }
                #expect(reply.status == 200 && reply.header("content-type")?.hasPrefix("image/") == true, "\(src): \(reply.status)")
            }
        }
        #expect(try server.get("/assets/page.css").header("content-type")?.hasPrefix("text/css") == true)
        #expect(try server.get("/assets/page.js").status == 200)
    }

    static func imageSources(_ html: String) -> [String] {
        html.components(separatedBy: "<img src=\"").dropFirst().compactMap { $0.split(separator: "\"").first }
            .map { $0.replacingOccurrences(of: "&amp;", with: "&") }
    }

    @Test func tagsRoundTripThroughTheExtendedAttribute() throws {
        let f = try Fixture()
        guard f.tagsWork else { return }  // a file system without user extended attributes
        let server = try Server(f)
        let file = f.root + "/trip/beach1.png"
        let target = "/tags?path=\(Self.q(file))&tag=\(Self.q("Summer 2026"))"

        let added = try server.send("PUT", target, headers: server.bearer)
        #expect(added.status == 200)
        #expect(added.json["tags"] as? [String] == ["Summer 2026"])
        #expect(FileTags.read(path: file) == ["Summer 2026"])
        let tagged = try server.get("/search?q=\(Self.q(#"kMDItemUserTags == "summer 2026"c"#))")
        #expect((tagged.json["results"] as? [[String: Any]])?.compactMap { $0["path"] as? String } == [file], "the index follows at once")
        let counts = try server.get("/tags").json["tags"] as? [[String: Any]] ?? []
        #expect(counts.contains { $0["tag"] as? String == "Summer 2026" && $0["count"] as? Int == 1 })
        #expect(counts.contains { $0["tag"] as? String == "sky" && $0["count"] as? Int == 1 }, "tags written by others, seen by the warm")
        #expect(try server.get("/tagged?tag=\(Self.q("Summer 2026"))").text.contains("beach1.png"))
        // Adding twice keeps one; another tag joins the list.
        _ = try server.send("PUT", target, headers: server.bearer)
        _ = try server.send("PUT", "/tags?path=\(Self.q(file))&tag=work", headers: server.bearer)
        #expect(FileTags.read(path: file) == ["Summer 2026", "work"])

        let removed = try server.send("DELETE", target, headers: server.bearer)
        #expect(removed.status == 200 && removed.json["tags"] as? [String] == ["work"])
        #expect(FileTags.read(path: file) == ["work"])
        #expect(try server.get("/search?q=\(Self.q(#"kMDItemUserTags == "summer 2026"c"#))").json["count"] as? Int == 0)
        _ = try server.send("DELETE", "/tags?path=\(Self.q(file))&tag=work", headers: server.bearer)
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(cfi_getxattr(file, "user.xdg.tags", &buffer, buffer.count) < 0 && errno == ENODATA, "the last tag removes the attribute")

        // Tags that would not read back as themselves are refused.
        for bad in ["a,b", "", " padded", String(repeating: "x", count: 300)] {
            #expect(try server.send("PUT", "/tags?path=\(Self.q(file))&tag=\(Self.q(bad))", headers: server.bearer).status == 400, "\(bad)")
        }

        // The page's form, as a browser without JavaScript posts it: cookie and Origin.
        let cookie = try #require(try server.get("/").header("set-cookie")?.split(separator: ";").first.map(String.init))
        let form = "path=\(Self.q(file))&tag=from+the+form&action=add"
        let posted = try server.send("POST", "/item/tags", headers: ["Cookie": cookie, "Origin": server.origin,
                                                                     "Content-Type": "application/x-www-form-urlencoded"], body: form)
        #expect(posted.status == 303 && posted.header("location") == "/item?path=\(Self.q(file))")
        #expect(FileTags.read(path: file) == ["from the form"])
    }

    @Test func writesNeedTheTokenAndTheSameOrigin() throws {
        let f = try Fixture()
        let server = try Server(f)
        let file = f.root + "/notes.txt"
        let target = "/tags?path=\(Self.q(file))&tag=x"
        #expect(server.token.count == 64)
        var st = stat()
        #expect(stat(f.cache + "/serve-token", &st) == 0 && st.st_mode & 0o777 == 0o600)

        let anonymous = try server.send("PUT", target)
        #expect(anonymous.status == 401 && anonymous.json["status"] as? Int == 401)
        #expect(try server.send("PUT", target, headers: ["Authorization": "Bearer " + String(repeating: "0", count: 64)]).status == 401)
        let cookie = "thumbcache_token=\(server.token)"
        #expect(try server.send("PUT", target, headers: ["Cookie": cookie]).status == 403, "a cookie without Origin")
        #expect(try server.send("PUT", target, headers: ["Cookie": cookie, "Origin": "http://evil.example"]).status == 403)
        #expect(try server.send("PUT", target, headers: ["Cookie": cookie, "Origin": server.origin, "Sec-Fetch-Site": "cross-site"]).status == 403)
        #expect(try server.send("POST", "/item/tags", headers: ["Cookie": cookie, "Origin": "http://evil.example"], body: "path=\(Self.q(file))&tag=x").status == 403)
        #expect(FileTags.read(path: file).isEmpty, "no refused write reached the file")
        if f.tagsWork {
            #expect(try server.send("PUT", target, headers: ["Cookie": cookie, "Origin": server.origin, "Sec-Fetch-Site": "same-origin"]).status == 200)
            #expect(try server.send("DELETE", target, headers: server.bearer).status == 200)
        }
        // A page reached under another name (DNS rebinding) is refused.
        #expect(try server.get("/", headers: ["Host": "evil.example:\(server.port)"]).status == 421)
        #expect(try server.get("/", headers: ["Host": "localhost:\(server.port)"]).status == 200)
    }

    @Test func readsNeedTheTokenBeyondLoopbackOrWhenAsked() throws {
        let f = try Fixture()
        let before = try AccessToken.loadOrCreate(directory: f.cache)
        let server = try Server(f, arguments: ["--require-token"])
        #expect(server.token == before, "the token survives restarts")
        #expect(try server.get("/search?q=beach").status == 401)
        #expect(try server.get("/").status == 401)
        #expect(try server.get("/search?q=beach", headers: server.bearer).status == 200)
        #expect(try server.get("/search?q=beach", headers: ["Cookie": "a=b; thumbcache_token=\(server.token)"]).status == 200)
        #expect(try server.get("/?token=wrong").status == 401)
        let login = try server.get("/?token=\(server.token)")
        #expect(login.status == 303 && login.header("location") == "/")
        #expect(login.header("set-cookie")?.contains("HttpOnly; SameSite=Strict") == true)

        // Any address but loopback: the token for every read, and any Host (the token is the check).
        let open = try Server(f, arguments: ["--address", "0.0.0.0"])
        #expect(try open.get("/search?q=beach").status == 401)
        #expect(try open.get("/thumbnails/\(String(repeating: "0", count: 32))").status == 401)
        #expect(try open.get("/search?q=beach", headers: open.bearer.merging(["Host": "nas.local"]) { $1 }).status == 200)
    }

    /// The original file, whole or by ranges (RFC 9110): what a video player seeking in it asks.
    @Test func originalsAreServedWholeOrByRanges() throws {
        let f = try Fixture()
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let path = f.root + "/trip/clip.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try Data("<script>alert(1)</script>".utf8).write(to: URL(fileURLWithPath: f.root + "/page.html"))
        let server = try Server(f)
        let target = "/files?path=\(Self.q(path))"
        let whole = try server.get(target)
        #expect(whole.status == 200 && whole.body == bytes && whole.header("accept-ranges") == "bytes")
        #expect(whole.header("content-length") == "300000" && whole.header("etag") != nil && whole.header("last-modified") != nil)
        let n = bytes.count
        for (range, first, last) in [("bytes=0-9", 0, 9), ("bytes=150000-150099", 150_000, 150_099), ("bytes=\(n - 10)-", n - 10, n - 1),
                                     ("bytes=-1000", n - 1000, n - 1), ("bytes=299990-400000", 299_990, n - 1), ("bytes=-999999", 0, n - 1)] {
            let part = try server.get(target, headers: ["Range": range])
            #expect(part.status == 206, "\(range): \(part.status)")
            #expect(part.header("content-range") == "bytes \(first)-\(last)/\(n)", "\(range)")
            #expect(part.body == Array(bytes[first...last]), "\(range)")
        }
        for range in ["bytes=\(n)-", "bytes=400000-400010", "bytes=-0"] {
            let refused = try server.get(target, headers: ["Range": range])
            #expect(refused.status == 416 && refused.header("content-range") == "bytes */\(n)" && refused.body.isEmpty, "\(range)")
        }
        // Not a single range we answer: the whole file, as the RFC allows.
        for range in ["bytes=0-9,20-29", "items=0-9", "bytes=9-0", "bytes=abc"] {
            #expect(try server.get(target, headers: ["Range": range]).status == 200, "\(range)")
        }
        // A range of another version of the file is not mixed in: If-Range with an old tag gets it whole.
        let stale = try server.get(target, headers: ["Range": "bytes=0-9", "If-Range": "\"0-0-0\""])
        #expect(stale.status == 200 && stale.body.count == n)
        let fresh = try server.get(target, headers: ["Range": "bytes=0-9", "If-Range": whole.header("etag") ?? ""])
        #expect(fresh.status == 206 && fresh.body.count == 10)
        let head = try server.send("HEAD", target)
        #expect(head.status == 200 && head.body.isEmpty && head.header("content-length") == "300000")
        // A page among the files runs nothing in the server's origin.
        let html = try server.get("/files?path=\(Self.q(f.root + "/page.html"))")
        #expect(html.status == 200 && html.header("content-security-policy") == "sandbox" && html.header("x-content-type-options") == "nosniff")
        #expect(try server.get("/files?path=\(Self.q(f.root + "/sunset.jpg"))").header("content-type") == "image/jpeg")
    }

    /// The item page opens with a look at the file (Quick Look's): a Motion Photo's still and its
    /// movie, the movie answered by ranges from the photo's file; a Live Photo's still and the movie
    /// paired with it; an image a browser shows, itself.
    @Test func theItemPageShowsTheFileAndAMotionPhotosMovie() throws {
        let f = try Fixture()
        let mp4 = try MotionPhotoFixture.movie(in: f.dir)
        let photo = f.root + "/PXL_motion.jpg"
        try Data(MotionPhotoFixture.jpeg(xmp: MotionPhotoFixture.motionPhotoXMP(videoLength: mp4.count, presentationUs: 500_000), trailer: mp4))
            .write(to: URL(fileURLWithPath: photo))
        try #require(try ChildProcess.run("thumbcache", ["warm", f.root, "--cache", f.cache]).status == .exited(0))
        let server = try Server(f)
        let page = try server.get("/item?path=\(Self.q(photo))").text
        let movieURL = "/files?path=\(URLText.query(photo))&amp;part=motion"
        #expect(page.contains("<video class=\"viewer motion\"") && page.contains(movieURL), "\(page)")
        let movie = try server.get("/files?path=\(Self.q(photo))&part=motion")
        #expect(movie.status == 200 && movie.header("content-type") == "video/mp4" && movie.body == mp4)
        let tail = try server.get("/files?path=\(Self.q(photo))&part=motion", headers: ["Range": "bytes=-100"])
        #expect(tail.status == 206 && tail.header("content-range") == "bytes \(mp4.count - 100)-\(mp4.count - 1)/\(mp4.count)")
        #expect(tail.body == Array(mp4.suffix(100)))
        #expect(try server.get("/files?path=\(Self.q(f.root + "/sunset.jpg"))&part=motion").status == 404)
        // A Samsung trailer's movie lies inside the file, before the trailer's directory.
        let samsung = f.root + "/20251124_101010.jpg"
        try Data(MotionPhotoFixture.samsung(still: ImageEncoder.jpeg(TestPictures.source()), movie: mp4)).write(to: URL(fileURLWithPath: samsung))
        let inside = try server.get("/files?path=\(Self.q(samsung))&part=motion")
        #expect(inside.status == 200 && inside.header("content-type") == "video/mp4" && inside.body == mp4)
        #expect(try server.get("/files?path=\(Self.q(photo))&part=other").status == 400)
        // A Live Photo's still plays the movie it is paired with; the movie's own page plays it too.
        let id = "4C6F7665-2D4C-4976-6550-686F746F7321"
        let still = f.root + "/IMG_0042.JPG"
        try Data(ImageEncoder.jpeg(TestPictures.source(), options: ImageEncoder.JPEGOptions(), exif: MotionPhotoFixture.exifWithAppleIdentifier(id)))
            .write(to: URL(fileURLWithPath: still))
        let live = f.root + "/trip/IMG_0042.MOV"
        try FixtureTools.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "1", "-c:v", "libx264",
                                        "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "use_metadata_tags",
                                        "-metadata", "com.apple.quicktime.content.identifier=\(id)", live])
        try #require(try ChildProcess.run("thumbcache", ["warm", f.root, "--cache", f.cache]).status == .exited(0))
        let stillPage = try server.get("/item?path=\(Self.q(still))").text
        #expect(stillPage.contains("<video class=\"viewer motion\"") && stillPage.contains("src=\"/files?path=\(URLText.query(live))\""), "\(stillPage)")
        let moviePage = try server.get("/item?path=\(Self.q(live))").text
        #expect(moviePage.contains("<video class=\"viewer\" controls") && !moviePage.contains("viewer motion"), "\(moviePage)")
        let sunset = try server.get("/item?path=\(Self.q(f.root + "/sunset.jpg"))").text
        #expect(sunset.contains("<img class=\"viewer\" src=\"/files?path=\(URLText.query(f.root + "/sunset.jpg"))\""), "\(sunset)")
        #expect(try server.get("/").header("content-security-policy")?.contains("media-src 'self'") == true)
    }

    /// Previews by immutable URLs that name the content and the page, made on demand from a
    /// served file with that content; the item page shows page N with links to its neighbours.
    @Test func previewsOfAnyPageAreImmutableAndTheItemPageLinksThePages() throws {
        let f = try Fixture()
        let pdf = f.root + "/manual.pdf"
        try Data(PDFFixture.document(pageTexts: ["One", "Second page", "Third and last"])).write(to: URL(fileURLWithPath: pdf))
        try #require(try ChildProcess.run("thumbcache", ["warm", f.root, "--cache", f.cache]).status == .exited(0))
        let server = try Server(f)
        // The redirect names the content and the page.
        let moved = try server.get("/preview?path=\(Self.q(pdf))&page=2")
        let location = try #require(moved.header("location"))
        #expect(moved.status == 302 && location.hasPrefix("/previews/") && location.hasSuffix("?page=2"), "\(location)")
        let second = try server.get(location)
        #expect(second.status == 200 && second.header("content-type") == "image/jpeg", "\(second.status) \(second.text)")
        #expect(second.header("cache-control") == ThumbnailEndpoints.immutable)
        let image = try ImageDecoder.jpeg(second.body)
        #expect(max(image.width, image.height) == PreviewEndpoints.defaultSize)
        let first = try server.get(location.replacingOccurrences(of: "page=2", with: "page=1"))
        #expect(first.status == 200 && first.body != second.body, "each page its own picture")
        let etag = try #require(second.header("etag"))
        #expect(try server.get(location, headers: ["If-None-Match": etag]).status == 304)
        // Smaller on request; a page past the end and a content nobody serves are not found.
        let small = try server.get(location + "&size=300")
        let smaller = try ImageDecoder.jpeg(small.body)
        #expect(small.status == 200 && max(smaller.width, smaller.height) == 300)
        let past = try server.get(location.replacingOccurrences(of: "page=2", with: "page=9"))
        #expect(past.status == 404 && past.text.contains("no page 9: the file has 3 pages"), "\(past.text)")
        #expect(try server.get(location + "&size=9000").status == 400)
        let secret = try ContentHasher().hash(fileAt: f.secret).0
        #expect(try server.get(PreviewEndpoints.url(secret)).status == 404, "a file outside the served folders has no preview here")
        // The item page: page 2 of 3, links either side that work without JavaScript.
        let page = try server.get("/item?path=\(Self.q(pdf))&page=2").text
        let hash = location.dropFirst("/previews/".count).prefix(32)
        #expect(page.contains("<img class=\"viewer\" id=\"preview\" src=\"/previews/\(hash)?page=2\""), "\(page)")
        #expect(page.contains("Page 2 of 3") && page.contains("rel=\"prev\" href=\"/item?path=\(URLText.query(pdf))&amp;page=1\"")
                && page.contains("rel=\"next\" href=\"/item?path=\(URLText.query(pdf))&amp;page=3\""), "\(page)")
        let last = try server.get("/item?path=\(Self.q(pdf))&page=3").text
        #expect(last.contains("rel=\"prev\"") && !last.contains("rel=\"next\""))
        // A file of one page has no pager; its preview still shows.
        let note = try server.get("/item?path=\(Self.q(f.root + "/notes.txt"))").text
        #expect(note.contains("id=\"preview\"") && !note.contains("class=\"pager\""), "\(note)")
    }

    /// An EPUB without a cover of 50 short paragraphs (100 lines: three text pages).
    static func book(in f: Fixture) throws -> String {
        let book = f.root + "/book.epub"
        _ = try FixtureTools.run("/usr/bin/python3", ["-c", """
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1], "w")
            z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
            z.writestr("META-INF/container.xml", '<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>')
            z.writestr("content.opf", '<package><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/></manifest>'
                       '<spine><itemref idref="a"/></spine></package>')
            z.writestr("a.xhtml", "<html><body>" + "".join(f"<p>Paragraph {i} of a short book.</p>" for i in range(50)) + "</body></html>")
            z.close()
            """, book])
        return book
    }

    /// An e-book's pages are its words (this one has no cover): not counted, so the pager offers
    /// the next page until its preview is not found.
    @Test func anEBooksPagesAreOfferedUntilThereIsNone() throws {
        let f = try Fixture()
        let book = try Self.book(in: f)
        try #require(try ChildProcess.run("thumbcache", ["warm", f.root, "--cache", f.cache]).status == .exited(0))
        let server = try Server(f)
        let page = try server.get("/item?path=\(Self.q(book))&page=2").text
        #expect(page.contains("<span class=\"page-number\" aria-live=\"polite\">Page 2</span>") && !page.contains("data-pages"), "\(page)")
        #expect(page.contains("rel=\"next\" href=\"/item?path=\(URLText.query(book))&amp;page=3\""), "\(page)")
        let second = try server.get("/preview?path=\(Self.q(book))&page=2")
        let location = try #require(second.header("location"))
        #expect(try server.get(location).status == 200)
        // 50 paragraphs and blank lines between: 100 lines, three text pages, and no cover before them.
        let past = try server.get(location.replacingOccurrences(of: "page=2", with: "page=6"))
        #expect(past.status == 404 && past.text.contains("no page 6: the file has 3 pages"), "\(past.text)")
        let first = try server.get("/preview?path=\(Self.q(book))&page=1")
        let firstLocation = try #require(first.header("location"))
        #expect(try server.get(firstLocation).status == 200, "page 1 is its first page of words")
    }

    @Test func escapeAttemptsAreRefused() throws {
        let f = try Fixture()
        let server = try Server(f)
        let store = try ThumbnailStore.open(directory: f.cache)
        let secretHash = try store.identify(fileAt: f.secret, hasher: store.hasher()).content.hex
        let siblingHash = try store.identify(fileAt: f.sibling + "/neighbour.png", hasher: store.hasher()).content.hex
        let r = f.root
        let attempts: [(method: String, target: String, headers: [String: String])] = [
            ("GET", "/info?path=/etc/passwd", [:]),
            ("GET", "/info?path=\(r)/../outside/secret-plans.png", [:]),
            ("GET", "/info?path=\(r)/%2e%2e/outside/secret-plans.png", [:]),
            ("GET", "/info?path=\(r)/%2E%2E%2Foutside%2Fsecret-plans.png", [:]),
            ("GET", "/info?path=\(r)/..%2f..%2f..%2fetc%2fpasswd", [:]),
            ("GET", "/info?path=\(r)/escape/secret-plans.png", [:]),
            ("GET", "/info?path=\(r)/link.png", [:]),
            ("GET", "/info?path=//etc/passwd", [:]),
            ("GET", "/info?path=etc/passwd", [:]),
            ("GET", "/info?path=~root/.bashrc", [:]),
            ("GET", "/info?path=\(r)/notes.txt%00/../../../etc/passwd", [:]),
            ("GET", "/info?path=\(f.sibling)/neighbour.png", [:]),
            ("GET", "/files?path=/etc/passwd", [:]),
            ("GET", "/files?path=\(r)/../outside/secret-plans.png", [:]),
            ("GET", "/files?path=\(r)/escape/secret-plans.png", [:]),
            ("GET", "/files?path=\(r)/link.png", ["Range": "bytes=0-10"]),
            ("GET", "/files?path=\(f.sibling)/neighbour.png", [:]),
            ("GET", "/files?path=\(r)/trip", [:]),
            ("GET", "/thumbnail?path=/etc/passwd", [:]),
            ("GET", "/thumbnail?path=\(r)/escape/secret-plans.png", [:]),
            ("GET", "/thumbnail?path=\(r)/link.png", [:]),
            ("GET", "/thumbnails/\(secretHash)", [:]),
            ("GET", "/thumbnails/\(siblingHash)?size=64", [:]),
            ("GET", "/thumbnails/../../../etc/passwd", [:]),
            ("GET", "/assets/../../../../etc/passwd", [:]),
            ("GET", "/browse?path=/", [:]),
            ("GET", "/browse?path=\(r)/..", [:]),
            ("GET", "/browse?path=\(r)/escape/", [:]),
            ("GET", "/browse?path=\(f.sibling)", [:]),
            ("GET", "/item?path=\(f.secret)", [:]),
            ("GET", "/search?q=secret&onlyin=\(f.outside)", [:]),
            ("GET", "/search?q=secret&onlyin=\(r)/../outside", [:]),
            ("GET", "/search?q=secret&onlyin=\(r)/escape", [:]),
            ("PUT", "/tags?path=\(f.secret)&tag=pwned", ["Authorization": "Bearer "]),
            ("PUT", "/tags?path=\(r)/link.png&tag=pwned", ["Authorization": "Bearer TOKEN"]),
            ("PUT", "/tags?path=\(r)/escape/secret-plans.png&tag=pwned", ["Authorization": "Bearer TOKEN"]),
            ("DELETE", "/tags?path=\(r)/../outside/secret-plans.png&tag=pwned", ["Authorization": "Bearer TOKEN"]),
            ("GET", "/", ["Host": "attacker.example"]),
        ]
        #expect(attempts.count >= 30)
        for attempt in attempts {
            let headers = attempt.headers.mapValues { $0.replacingOccurrences(of: "TOKEN", with: server.token) }
            let reply = try RawHTTP.request(attempt.method, attempt.target, port: server.port, headers: headers)
            let what = "\(attempt.method) \(attempt.target): \(reply.status) \(reply.text.prefix(200))"
            #expect([400, 401, 403, 404, 421].contains(reply.status), "\(what)")
            #expect(!reply.text.contains(f.outside) && !reply.text.contains("root:x:") && !reply.text.contains("neighbour"), "\(what)")
            if reply.header("content-type")?.hasPrefix("application/json") == true {
                #expect(reply.json["status"] as? Int == reply.status && reply.json["error"] is String, "\(what)")
            }
        }
        // Searches answer, but never with what is outside.
        for target in ["/search?q=secret", "/search?q=neighbour", "/search?q=\(Self.q("kMDItemFSSize >= 0"))&limit=1000", "/find?q=secret"] {
            let reply = try server.get(target)
            #expect(reply.status == 200 && !reply.text.contains("secret-plans") && !reply.text.contains("neighbour"), "\(target)")
        }
        #expect(FileTags.read(path: f.secret).isEmpty)
    }
}
