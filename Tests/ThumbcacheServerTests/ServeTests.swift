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
}
