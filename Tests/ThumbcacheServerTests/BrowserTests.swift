import Foundation
import Testing
import ThumbcacheTestSupport
@testable import Thumbcache

/// The page in a real browser: headless Chromium driven through chromedriver (WebDriver, plain
/// HTTP with JSON) searches, gets a grid whose every thumbnail loaded, opens an item and tags it.
/// A screenshot of the grid is kept in `.build/test-artifacts/serve-grid.png`.
@Suite(.serialized)
struct BrowserTests {
    /// chromedriver on a free loopback port, and one browser session; both stopped when released.
    final class Browser {
        let driver: ChildProcess
        let port: Int
        let profile = TemporaryDirectory(prefix: "thumbcache-chromium")
        private(set) var session = ""
        static let element = "element-6066-11e4-a52e-4f735466cecf"

        init() throws {
            port = Self.freePort()
            driver = try ChildProcess(program: "/usr/bin/chromedriver", arguments: ["--port=\(port)", "--allowed-ips=127.0.0.1"])
            var ready = false
            for _ in 0..<100 where !ready {
                ready = ((try? RawHTTP.request("GET", "/status", port: port))?.json["value"] as? [String: Any])?["ready"] as? Bool == true
                if !ready { usleep(100_000) }
            }
            #expect(ready, "chromedriver did not start")
            let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": ["browserName": "chrome", "goog:chromeOptions": [
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,800",
                         "--force-device-scale-factor=1", "--user-data-dir=\(profile.path)", "--no-first-run",
                         "--autoplay-policy=no-user-gesture-required"],
            ]]]]
            let reply = try command("POST", "/session", capabilities)
            session = (reply["value"] as? [String: Any])?["sessionId"] as? String ?? ""
            #expect(!session.isEmpty, "no session: \(reply)")
        }

        deinit {
            if !session.isEmpty { _ = try? command("DELETE", "/session/\(session)") }
            driver.kill(SIGTERM)
            _ = driver.wait(timeout: 20)
        }

        @discardableResult
        func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> [String: Any] {
            let bytes = try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
            return try RawHTTP.request(method, path, port: port, headers: ["Content-Type": "application/json"], body: bytes).json
        }

        func go(_ url: String) throws { try command("POST", "/session/\(session)/url", ["url": url]) }

        func find(_ css: String) throws -> String? {
            let reply = try command("POST", "/session/\(session)/element", ["using": "css selector", "value": css])
            return (reply["value"] as? [String: Any])?[Self.element] as? String
        }

        func type(_ text: String, into element: String) throws {
            try command("POST", "/session/\(session)/element/\(element)/value", ["text": text])
        }

        func click(_ element: String) throws { try command("POST", "/session/\(session)/element/\(element)/click", [:]) }

        func run(_ script: String) throws -> Any? {
            try command("POST", "/session/\(session)/execute/sync", ["script": script, "args": []])["value"]
        }

        /// Presses and releases `key` (a WebDriver key code such as "\u{E014}", the right arrow) on
        /// whatever has the focus, as a person would.
        func press(_ key: String) throws {
            try command("POST", "/session/\(session)/actions", ["actions": [[
                "type": "key", "id": "keyboard", "actions": [["type": "keyDown", "value": key], ["type": "keyUp", "value": key]],
            ]]])
        }

        func screenshot() throws -> Data? {
            (try command("GET", "/session/\(session)/screenshot")["value"] as? String).flatMap { Data(base64Encoded: $0) }
        }

        /// Polls `script` (which returns a boolean) for up to 20 s.
        func until(_ script: String) throws -> Bool {
            for _ in 0..<200 {
                if try run(script) as? Bool == true { return true }
                usleep(100_000)
            }
            return false
        }

        static func freePort() -> Int {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &sa) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1 }
            }
            return Int(UInt16(bigEndian: sa.sin_port))
        }
    }

    /// Where test artifacts are kept: `.build/test-artifacts`.
    static var artifacts: String {
        let build = URL(fileURLWithPath: ChildProcess.productsDirectory).deletingLastPathComponent().deletingLastPathComponent().path
        let dir = build + "/test-artifacts"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The item page's viewer: a video plays from the original, seeking by ranges (its
    /// `currentTime` advances, and a seek lands), and a Motion Photo's movie plays from the photo.
    /// Screenshots in `.build/test-artifacts/serve-video.png` and `serve-motion.png`.
    @Test func chromiumPlaysAVideoAndAMotionPhotosMovie() throws {
        let f = try ServeTests.Fixture()
        let video = f.root + "/clip.webm"
        try FixtureTools.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-t", "6",
                                        "-c:v", "libvpx-vp9", "-deadline", "realtime", "-b:v", "200k", video])
        let mp4 = try MotionPhotoFixture.movie(in: f.dir, seconds: 4)
        let photo = f.root + "/PXL_motion.jpg"
        try Data(MotionPhotoFixture.jpeg(xmp: MotionPhotoFixture.motionPhotoXMP(videoLength: mp4.count, presentationUs: 0), trailer: mp4))
            .write(to: URL(fileURLWithPath: photo))
        try #require(try ChildProcess.run("thumbcache", ["warm", f.root, "--cache", f.cache]).status == .exited(0))
        let server = try ServeTests.Server(f)
        let browser = try Browser()
        let base = "http://127.0.0.1:\(server.port)"
        let query = { (path: String) in path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path }

        try browser.go(base + "/item?path=" + query(video))
        #expect(try browser.until("return !!document.querySelector('video.viewer')"))
        _ = try browser.run("const v = document.querySelector('video.viewer'); v.muted = true; v.play(); return true")
        let played = try browser.until("return document.querySelector('video.viewer').currentTime > 1")
        let state = try browser.run("const v = document.querySelector('video.viewer'); return [v.currentTime, v.readyState, v.error && v.error.message]")
        #expect(played, "the video did not play: \(String(describing: state))")
        _ = try browser.run("document.querySelector('video.viewer').currentTime = 4.5; return true")
        #expect(try browser.until("return document.querySelector('video.viewer').currentTime >= 4.5"), "the seek did not land")
        try browser.screenshot()?.write(to: URL(fileURLWithPath: Self.artifacts + "/serve-video.png"))

        try browser.go(base + "/item?path=" + query(photo))
        #expect(try browser.until("return !!document.querySelector('video.motion')"))
        _ = try browser.run("const v = document.querySelector('video.motion'); v.play(); return true")
        let moved = try browser.until("return document.querySelector('video.motion').currentTime > 0.5")
        let motion = try browser.run("const v = document.querySelector('video.motion'); return [v.currentTime, v.readyState, v.error && v.error.message]")
        #expect(moved, "the Motion Photo's movie did not play: \(String(describing: motion))")
        try browser.screenshot()?.write(to: URL(fileURLWithPath: Self.artifacts + "/serve-motion.png"))
    }

    /// The item page of a PDF pages with the arrow keys: the preview of each page loads in place
    /// (a different picture), the counter and the address follow, and the last page stops there.
    @Test func chromiumPagesThroughAPDFWithTheArrowKeys() throws {
        let f = try ServeTests.Fixture()
        let pdf = f.root + "/manual.pdf"
        try Data(PDFFixture.document(pageTexts: ["One", "Second page", "Third and last"])).write(to: URL(fileURLWithPath: pdf))
        try #require(try ChildProcess.run("thumbcache", ["warm", f.root, "--cache", f.cache]).status == .exited(0))
        let server = try ServeTests.Server(f)
        let browser = try Browser()
        let base = "http://127.0.0.1:\(server.port)"
        try browser.go(base + "/item?path=" + (pdf.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? pdf))
        let loaded = "const i = document.getElementById('preview'); return i.complete && i.naturalWidth > 0"
        #expect(try browser.until(loaded), "page 1's preview did not load")
        // A pixel that differs between the pages: each page's text and boxes sit elsewhere.
        let fingerprint = """
            const i = document.getElementById('preview'); const c = document.createElement('canvas');
            c.width = 64; c.height = 64; const g = c.getContext('2d'); g.drawImage(i, 0, 0, 64, 64);
            return Array.from(g.getImageData(0, 0, 64, 64).data).join(',')
            """
        var seen = [try browser.run(fingerprint) as? String ?? ""]
        try browser.screenshot()?.write(to: URL(fileURLWithPath: Self.artifacts + "/serve-pdf-page1.png"))
        for page in 2...3 {
            try browser.press("\u{E014}")  // the right arrow
            #expect(try browser.until("return document.querySelector('.page-number').textContent === 'Page \(page) of 3'"), "page \(page)")
            #expect(try browser.until("return new URLSearchParams(location.search).get('page') === '\(page)' && document.getElementById('preview').src.includes('page=\(page)')"))
            #expect(try browser.until(loaded), "page \(page)'s preview did not load")
            seen.append(try browser.run(fingerprint) as? String ?? "")
        }
        try browser.screenshot()?.write(to: URL(fileURLWithPath: Self.artifacts + "/serve-pdf-page3.png"))
        #expect(Set(seen).count == 3 && !seen.contains(""), "three different pages were shown")
        // Past the last page nothing happens; the left arrow goes back.
        try browser.press("\u{E014}")
        #expect(try browser.run("return document.querySelector('.page-number').textContent") as? String == "Page 3 of 3")
        try browser.press("\u{E012}")  // the left arrow
        #expect(try browser.until("return document.querySelector('.page-number').textContent === 'Page 2 of 3'"))
        #expect(try browser.until(loaded))
        #expect(try browser.run(fingerprint) as? String == seen[1], "back to page 2's picture")

        // An e-book's pages are not counted ahead: past its last, the page goes back to it, counted
        // (this one has no cover: its three pages are its words).
        let book = try ServeTests.book(in: f)
        try #require(try ChildProcess.run("thumbcache", ["warm", f.root, "--cache", f.cache]).status == .exited(0))
        try browser.go(base + "/item?path=" + (book.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? book) + "&page=2")
        #expect(try browser.until(loaded), "the book's page 2 did not load")
        try browser.press("\u{E014}")
        #expect(try browser.until("return document.querySelector('.page-number').textContent === 'Page 3'"))
        #expect(try browser.until(loaded), "the book's last page did not load")
        try browser.press("\u{E014}")
        #expect(try browser.until("return document.querySelector('.page-number').textContent === 'Page 3 of 3'"))
        #expect(try browser.until(loaded), "back to the book's last page")
        #expect(try browser.run("return document.querySelector('a[rel=next]') === null && location.search.endsWith('page=3')") as? Bool == true)
        try browser.screenshot()?.write(to: URL(fileURLWithPath: Self.artifacts + "/serve-book-end.png"))
    }

    @Test func chromiumSearchesSeesEveryThumbnailAndTagsAFile() throws {
        let f = try ServeTests.Fixture()
        let server = try ServeTests.Server(f)
        let browser = try Browser()
        let base = "http://127.0.0.1:\(server.port)"

        try browser.go(base + "/")
        #expect(try browser.run("return document.title") as? String == "Recents · thumbcache")
        let search = try #require(try browser.find(".search input"))
        try browser.type("beach\u{E007}", into: search)  // Enter submits the form
        #expect(try browser.until("return location.pathname === '/find' && document.querySelectorAll('.grid img').length === 3"))
        // Every thumbnail loaded: complete, with pixels (a broken image has naturalWidth 0).
        let allLoaded = "return [...document.images].every(i => i.complete && i.naturalWidth > 0)"
        let loaded = try browser.until(allLoaded)
        let broken = try browser.run("return [...document.images].filter(i => !i.naturalWidth).map(i => i.src)")
        #expect(loaded, "broken images: \(String(describing: broken))")
        let shot = try #require(try browser.screenshot())
        try shot.write(to: URL(fileURLWithPath: Self.artifacts + "/serve-grid.png"))
        #expect(shot.starts(with: [0x89, 0x50, 0x4E, 0x47]))

        // Open one item with the keyboard's Enter on a focused tile, then add a tag.
        let tile = try #require(try browser.find(".grid .tile"))
        try browser.click(tile)
        #expect(try browser.until("return location.pathname === '/item' && !!document.getElementById('new-tag')"))
        #expect(try browser.until(allLoaded))
        let path = try #require(try browser.run("return new URLSearchParams(location.search).get('path')") as? String)
        #expect(path.hasPrefix(f.root + "/trip/beach"))
        guard f.tagsWork else { return }
        let field = try #require(try browser.find("#new-tag"))
        try browser.type("favourite\u{E007}", into: field)
        #expect(try browser.until("return [...document.querySelectorAll('#tags .tag')].some(t => t.textContent === 'favourite')"))
        #expect(FileTags.read(path: path) == ["favourite"])
        try browser.go(base + "/tagged")
        #expect(try browser.until("return document.body.textContent.includes('favourite')"))
    }
}
