import CThumbcacheFileInfo
import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheSync
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheServer

/// `thumbcache serve` as a child process on loopback, asked by a raw HTTP client: every endpoint,
/// the caching headers, the token and origin rules, tags through the extended attribute, and
/// escape attempts. The cache it serves also holds files outside its root (warmed beside it),
/// which must stay invisible.
@Suite(.serialized)
struct ServeTests {
    /// A tree to serve, a sibling whose name extends the root's, and a folder outside with a
    /// secret, all warmed into one cache; symbolic links from the root lead out.
    final class Fixture {
        let dir = TemporaryDirectory(prefix: "thumbcache-serve")
        let root: String, outside: String, sibling: String, cache: String
        let secret: String
        let tagsWork: Bool

        init() throws {
            let base = FilePaths.resolved(dir.path)
            root = base + "/photos"
            sibling = base + "/photos2"
            outside = base + "/outside"
            cache = base + "/cache"
            for d in [root + "/trip", sibling, outside] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
            for (i, (w, h)) in [(640, 480), (300, 500), (200, 200)].enumerated() {
                try Data(ImageEncoder.png(testPhoto(width: w + i, height: h))).write(to: URL(fileURLWithPath: root + "/trip/beach\(i).png"))
            }
            try Data(ImageEncoder.jpeg(testPhoto(width: 800, height: 600))).write(to: URL(fileURLWithPath: root + "/sunset.jpg"))
            try Data("holiday plans: <pack> towels & sun cream\n".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
            try Data(ImageEncoder.png(testPhoto(width: 90, height: 90))).write(to: URL(fileURLWithPath: sibling + "/neighbour.png"))
            secret = outside + "/secret-plans.png"
            try Data(ImageEncoder.png(testPhoto(width: 120, height: 80))).write(to: URL(fileURLWithPath: secret))
            try FileManager.default.createSymbolicLink(atPath: root + "/escape", withDestinationPath: outside)
            try FileManager.default.createSymbolicLink(atPath: root + "/link.png", withDestinationPath: secret)
            tagsWork = cfi_setxattr(root + "/sunset.jpg", "user.xdg.tags", "sky", 3) == 0
            // Older than the stat cache's racy window, so the warm's entries are trusted at once.
            let past = Date().addingTimeInterval(-10)
            for f in ["/trip/beach0.png", "/trip/beach1.png", "/trip/beach2.png", "/sunset.jpg", "/notes.txt"] {
                try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: root + f)
            }
            let warm = try ChildProcess(program: "thumbcache", arguments: ["warm", root, outside, sibling, "--cache", cache])
            #expect(warm.wait().termination == .exited(0))
        }
    }

    /// A running server; stopped with SIGTERM when released.
    final class Server {
        let child: ChildProcess
        let port: Int
        let token: String

        init(_ fixture: Fixture, arguments: [String] = []) throws {
            child = try ChildProcess(program: "thumbcache", arguments: ["serve", fixture.root, "--cache", fixture.cache, "--port", "0", "--json"] + arguments)
            let line = child.waitForLines(1, timeout: 60).first ?? ""
            let info = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            port = info?["port"] as? Int ?? 0
            token = (try? String(contentsOfFile: fixture.cache + "/serve-token", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            #expect(port > 0, "serve did not start: \(line) \(child.wait(timeout: 1).stderr)")
        }

        deinit {
            child.kill(SIGTERM)
            _ = child.wait(timeout: 20)
        }

        func get(_ target: String, headers: [String: String] = [:]) throws -> RawHTTP.Reply {
            try RawHTTP.request("GET", target, port: port, headers: headers)
        }

        func send(_ method: String, _ target: String, headers: [String: String] = [:], body: String = "") throws -> RawHTTP.Reply {
            try RawHTTP.request(method, target, port: port, headers: headers, body: Array(body.utf8))
        }

        var bearer: [String: String] { ["Authorization": "Bearer \(token)"] }
        var origin: String { "http://127.0.0.1:\(port)" }
    }

    static func q(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._"))) ?? s }

    @Test func thumbnailsAreImmutableByContentAndRevalidateWith304() throws {
        let f = try Fixture()
        let server = try Server(f)
        let search = try server.get("/search?q=beach&attrs=kMDItemPixelWidth,kMDItemFSName")
        #expect(search.status == 200)
        #expect(search.header("content-type")?.hasPrefix("application/json") == true)
        let results = search.json["results"] as? [[String: Any]] ?? []
        #expect(search.json["count"] as? Int == 3)
        #expect(Set(results.compactMap { $0["path"] as? String }) == Set((0..<3).map { f.root + "/trip/beach\($0).png" }))
        let first = try #require(results.first { ($0["path"] as? String)?.hasSuffix("beach0.png") == true })
        let hash = try #require(first["contentHash"] as? String)
        #expect((first["attributes"] as? [String: Any])?["kMDItemPixelWidth"] as? Int == 640)
        #expect(first["thumbnail"] as? String == "/thumbnails/\(hash)?size=128")

        // Cached by a warm: served with the headers that let any cache keep it forever.
        let thumb = try server.get("/thumbnails/\(hash)?size=256")
        #expect(thumb.status == 200)
        #expect(thumb.header("content-type") == "image/png")
        #expect(thumb.header("cache-control") == "public, max-age=31536000, immutable")
        let etag = try #require(thumb.header("etag"))
        let image = try ImageDecoder.png(thumb.body, name: "reply")
        #expect(image.width == 256 && image.height == 192)
        #expect(try server.get("/thumbnails/\(hash)?size=256").header("etag") == etag)
        let revalidated = try server.get("/thumbnails/\(hash)?size=256", headers: ["If-None-Match": etag])
        #expect(revalidated.status == 304 && revalidated.body.isEmpty && revalidated.header("etag") == etag)
        #expect(try server.get("/thumbnails/\(hash)?size=256", headers: ["If-None-Match": "W/\(etag), \"other\""]).status == 304)
        #expect(try server.get("/thumbnails/\(hash)?size=256", headers: ["If-None-Match": "\"stale\""]).status == 200)
        let head = try server.send("HEAD", "/thumbnails/\(hash)?size=256")
        #expect(head.status == 200 && head.header("etag") == etag)

        // Not cached at this size: made on demand, stored, then the same bytes again.
        let store = try ThumbnailStore.open(directory: f.cache)
        let content = try #require(ContentHash(hex: hash))
        #expect(try !store.containsThumbnail(ThumbnailSpec(size: 100, scale: 2).key(for: content)))
        let made = try server.get("/thumbnails/\(hash)?size=100&scale=2")
        #expect(made.status == 200 && made.header("etag") != etag)
        #expect(try ImageDecoder.png(made.body, name: "made").width == 200)
        #expect(try store.containsThumbnail(ThumbnailSpec(size: 100, scale: 2).key(for: content)))
        #expect(try server.get("/thumbnails/\(hash)?size=100&scale=2").body == made.body)

        // The path URL redirects to the immutable one of the file's current content.
        let redirect = try server.get("/thumbnail?path=\(Self.q(f.root + "/trip/beach0.png"))&size=64")
        #expect(redirect.status == 302)
        #expect(redirect.header("location") == "/thumbnails/\(hash)?size=64")
        #expect(redirect.header("cache-control") == "no-cache")
        // A file changed since: the redirect follows the new content, whose thumbnail is made.
        try Data(ImageEncoder.png(testPhoto(width: 50, height: 40))).write(to: URL(fileURLWithPath: f.root + "/trip/beach2.png"))
        let moved = try server.get("/thumbnail?path=\(Self.q(f.root + "/trip/beach2.png"))&size=64")
        let newURL = try #require(moved.header("location"))
        #expect(!newURL.contains(hash))
        let newThumb = try server.get(newURL)
        #expect(newThumb.status == 200)
        #expect(try ImageDecoder.png(newThumb.body, name: "new").width == 50, "never enlarged")

        // Wrong hashes and sizes are the client's error, said as JSON.
        let unknown = try server.get("/thumbnails/\(String(repeating: "0", count: 32))")
        #expect(unknown.status == 404 && unknown.json["status"] as? Int == 404 && unknown.json["error"] is String)
        #expect(try server.get("/thumbnails/XYZ").status == 400)
        #expect(try server.get("/thumbnails/\(hash.uppercased())").status == 400)
        #expect(try server.get("/thumbnails/\(hash)?size=0").status == 400)
        #expect(try server.get("/thumbnails/\(hash)?size=99999").status == 400)
        #expect(try server.get("/thumbnails/\(hash)?scale=abc").status == 400)
        #expect(try server.get("/no/such/page").status == 404)
    }

    /// Thumbnails held in memory are answered before the router (HotThumbnailResponder) on kept
    /// connections: with the same headers and rules as the router's endpoint, and in order
    /// behind requests the router is still answering.
    @Test func thumbnailsInMemoryAreAnsweredInOrderWithTheSameRules() throws {
        let f = try Fixture()
        let server = try Server(f, arguments: ["--require-token"])
        let search = try server.get("/search?q=beach0", headers: server.bearer)
        let hash = try #require((search.json["results"] as? [[String: Any]])?.first?["contentHash"] as? String)
        let url = "/thumbnails/\(hash)?size=256"
        let cold = try server.get(url, headers: server.bearer)
        #expect(cold.status == 200)
        let etag = try #require(cold.header("etag"))

        let replies = try RawHTTP.pipeline([
            (url, server.bearer),  // from memory
            (url, server.bearer.merging(["If-None-Match": etag]) { $1 }),
            ("/search?q=beach", server.bearer),  // answered by the router…
            (url, server.bearer),  // …so this one waits behind it
            ("/thumbnails/\(hash)?size=0", server.bearer),
            ("/info?path=\(Self.q(f.root + "/sunset.jpg"))", server.bearer),
            (url, server.bearer),
        ], port: server.port)
        #expect(replies.map(\.status) == [200, 304, 200, 200, 400, 200, 200])
        guard replies.count == 7 else { return }
        for i in [0, 3, 6] {
            #expect(replies[i].body == cold.body)
            for name in ["content-type", "cache-control", "etag", "content-length", "x-content-type-options"] {
                #expect(replies[i].header(name) == cold.header(name), "\(name) of reply \(i)")
            }
            #expect(replies[i].header("date")?.hasSuffix(" GMT") == true)
        }
        // The first is answered by serve's front, the fourth by NIO's pipeline the connection went
        // on to (behind the router's answer): the same headers in the same order, but the date.
        let withoutDate = { (reply: RawHTTP.Reply) in reply.headers.filter { $0.name != "date" }.map { "\($0.name): \($0.value)" } }
        #expect(withoutDate(replies[0]) == withoutDate(replies[3]))
        #expect(replies[1].header("etag") == etag && replies[1].body.isEmpty && replies[1].header("x-content-type-options") == "nosniff")
        #expect(replies[2].json["count"] as? Int == 3)
        #expect(replies[5].json["path"] as? String == f.root + "/sunset.jpg")

        // First on their connections, so answered from memory: the token and the Host still count.
        let noToken = try RawHTTP.pipeline([(url, [:]), (url, server.bearer)], port: server.port)
        #expect(noToken.map(\.status) == [401, 200] && noToken.first?.json["status"] as? Int == 401)
        let rebound = try RawHTTP.pipeline([(url, server.bearer.merging(["Host": "rebound.example"]) { $1 }), (url, server.bearer)], port: server.port)
        #expect(rebound.map(\.status) == [421, 200])

        // A HEAD (the router's) after hits: each response keeps its own framing, so the router's
        // replies after it still carry their bodies (NIO's encoder pairs responses with requests).
        let mixed = try RawHTTP.pipeline([("GET", url, server.bearer), ("GET", url, server.bearer), ("HEAD", url, server.bearer),
                                          ("GET", "/search?q=beach", server.bearer), ("GET", url, server.bearer)], port: server.port)
        #expect(mixed.map(\.status) == [200, 200, 200, 200, 200])
        guard mixed.count == 5 else { return }
        #expect(mixed[2].body.isEmpty && mixed[2].header("content-length") == cold.header("content-length"))
        #expect(mixed[3].json["count"] as? Int == 3)
        #expect(mixed[4].body == cold.body)
    }

    /// `--memory-cache 0` keeps no thumbnail in memory: each is read from the store again, the
    /// same bytes; a size that is none is refused before anything starts.
    @Test func theMemoryCacheIsSizedOrNone() throws {
        let f = try Fixture()
        let server = try Server(f, arguments: ["--memory-cache", "0"])
        let search = try server.get("/search?q=beach0")
        let hash = try #require((search.json["results"] as? [[String: Any]])?.first?["contentHash"] as? String)
        let first = try server.get("/thumbnails/\(hash)?size=256"), again = try server.get("/thumbnails/\(hash)?size=256")
        #expect(first.status == 200 && again.body == first.body && !first.body.isEmpty)
        let refused = try ChildProcess.run("thumbcache", ["serve", f.root, "--cache", f.cache, "--memory-cache", "lots"])
        #expect(refused.status == .exited(64) && refused.stderr.contains("--memory-cache takes a size like 64M"), "\(refused.stderr)")
    }

    /// `--idle-timeout`: a connection the HTTP server was handed (a search, kept alive), one that
    /// never sends a request, and one that takes nothing of a 32 MB download are all closed after
    /// it; a value that is not one is refused.
    @Test func idleConnectionsAreClosedAfterTheTimeout() throws {
        let f = try Fixture()
        let big = f.root + "/big.bin"
        try Data(count: 32 << 20).write(to: URL(fileURLWithPath: big))
        let server = try Server(f, arguments: ["--idle-timeout", "1"])
        let download = Array("GET /files?path=\(Self.q(big)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        let stalled = try RawHTTP.sendAndIdle(download, port: server.port, seconds: 15, pause: 4)
        #expect(stalled.closed && stalled.received.count < 32 << 20, "\(stalled.received.count) bytes, closed: \(stalled.closed)")
        let search = Array("GET /search?q=beach0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        let (received, closed) = try RawHTTP.sendAndIdle(search, port: server.port, seconds: 15)
        #expect(closed, "the search's connection was open after 15 s")
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        let silent = try RawHTTP.sendAndIdle([], port: server.port, seconds: 15)
        #expect(silent.closed && silent.received.isEmpty)
        #expect(try server.get("/search?q=beach0").status == 200)
        let refused = try ChildProcess.run("thumbcache", ["serve", f.root, "--cache", f.cache, "--idle-timeout", "0"])
        #expect(refused.status == .exited(64) && refused.stderr.contains("--idle-timeout takes seconds"), "\(refused.stderr)")
    }

    /// SIGTERM while a connection the front handed on is mid-response: the response is sent
    /// whole before the server exits (0). Before, the process left at once and cut it short.
    @Test func aResponseInProgressIsFinishedAtShutdown() throws {
        let f = try Fixture()
        let path = f.root + "/big.bin"
        let bytes = (0..<(32 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let server = try Server(f)
        let request = Array("GET /files?path=\(Self.q(path)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        let raw = try RawHTTP.fetch(request, port: server.port, pausingAfter: 1 << 16) {
            server.child.kill(SIGTERM)
            usleep(1_000_000)
        }
        let reply = try #require(try? RawHTTP.parse(raw, method: "GET"))
        #expect(reply.status == 200 && reply.body.count == bytes.count && reply.body == bytes, "\(reply.body.count) of \(bytes.count) bytes")
        #expect(server.child.wait(timeout: 30).termination == .exited(0))
    }

    /// The private folder of the Unix socket `serve` has Hummingbird listen on: a server killed
    /// outright leaves it behind, and the next start removes it; a live server's stays.
    @Test func aKilledServersSocketFolderIsRemovedAndALiveOnesKept() throws {
        let f = try Fixture()
        let live = try Server(f), killed = try Server(f)
        let (liveFolder, killedFolder) = (try #require(Self.socketFolder(live.child.processIdentifier, within: 10)),
                                          try #require(Self.socketFolder(killed.child.processIdentifier, within: 10)))
        killed.child.kill(SIGKILL)
        _ = killed.child.wait(timeout: 20)
        #expect(FileManager.default.fileExists(atPath: killedFolder + "/http"))
        // Only these two: another test's server may be starting beside this one, its folder
        // younger than the minute a start leaves alone.
        let removed = PrivateSocketFolder.removeStale(olderThan: 0, candidates: [killedFolder, liveFolder])
        #expect(removed.contains(killedFolder) && !FileManager.default.fileExists(atPath: killedFolder))
        #expect(!removed.contains(liveFolder) && FileManager.default.fileExists(atPath: liveFolder + "/http"))
        #expect(try live.get("/search?q=beach0").status == 200)
    }

    /// The folder of the Unix socket process `pid` listens on, looked for again until it shows or
    /// `seconds` pass (a CI run once found nothing just after the server said it was listening).
    static func socketFolder(_ pid: pid_t, within seconds: Double) -> String? {
        let end = Date().addingTimeInterval(seconds)
        repeat {
            if let folder = socketFolder(pid) { return folder }
            usleep(50_000)
        } while Date() < end
        return nil
    }

    /// The folder of the Unix socket process `pid` listens on, from its descriptors and /proc/net/unix.
    static func socketFolder(_ pid: pid_t) -> String? {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let inodes = Set(descriptors.compactMap { fd -> String? in
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"), link.hasPrefix("socket:[") else { return nil }
            return String(link.dropFirst(8).dropLast())
        })
        // Decoded leniently: another program's abstract socket may have any bytes in its name,
        // and a strict read of the whole table then gives nothing.
        let table = FileHandle(forReadingAtPath: "/proc/net/unix").map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 8, inodes.contains(String(fields[6])), fields[7].contains("/thumbcache-serve-") else { continue }
            return String(fields[7].dropLast(5))  // "/http"
        }
        return nil
    }

    /// A large thumbnail held in memory goes out from its in-memory file (`sendfile`): the server
    /// holds the file, and the bytes are those the router sent.
    @Test func largeThumbnailsInMemoryAreSentFromAFile() throws {
        let f = try Fixture()
        var noise = testPhoto(width: 600, height: 400)
        var seed: UInt32 = 12345
        for i in noise.pixels.indices where i % 4 != 3 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            noise.pixels[i] = UInt8(truncatingIfNeeded: seed >> 24)
        }
        let path = f.root + "/noise.png"
        try Data(ImageEncoder.png(noise)).write(to: URL(fileURLWithPath: path))
        let server = try Server(f)
        let held = { Self.heldFiles(server.child.processIdentifier) }
        #expect(held() == 0)
        let found = try server.get("/thumbnail?path=\(Self.q(path))&size=256")
        let url = try #require(found.header("location"))
        let cold = try server.get(url)
        #expect(cold.status == 200 && cold.body.count >= 16 << 10, "a noisy 256-pixel PNG is large")
        #expect(held() == 1)

        let replies = try RawHTTP.pipeline([(url, [:]), (url, ["If-None-Match": cold.header("etag") ?? ""]), (url, [:])], port: server.port)
        #expect(replies.map(\.status) == [200, 304, 200])
        for reply in [replies[0], replies[2]] {
            #expect(reply.body == cold.body)
            #expect(reply.header("content-length") == String(cold.body.count) && reply.header("etag") == cold.header("etag"))
        }
        // Many connections at once, so the event loops send the one file at the same time.
        let parallel = ConditionLockedState<[RawHTTP.Reply]>([])
        let port = server.port
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let replies = (try? RawHTTP.pipeline(Array(repeating: (url, [:]), count: 40), port: port)) ?? []
            parallel.withLock { $0 += replies }
        }
        let all = parallel.withLock { $0 }
        #expect(all.count == 320 && all.allSatisfy { $0.status == 200 && $0.body == cold.body })

        // HEAD goes through the router, which reads the held file back.
        let head = try RawHTTP.request("HEAD", url, port: server.port)
        #expect(head.status == 200 && head.header("content-length") == String(cold.body.count))
    }

    /// The server's descriptors that are held thumbnails' in-memory files.
    static func heldFiles(_ pid: pid_t) -> Int {
        let dir = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + $0))?.hasPrefix("/memfd:thumbcache-thumbnail") == true
        }.count
    }

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
