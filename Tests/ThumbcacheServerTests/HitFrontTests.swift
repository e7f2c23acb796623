import Foundation
import NIOCore
import Synchronization
import Testing
import ThumbcacheSync
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheServer

/// `serve`'s front on its own: held thumbnails answered from memory, in order, a held file's
/// responses through a client that reads slowly; the first request it does not answer handed on
/// with the connection and every byte from that request on, after all the responses before it.
struct HitFrontTests {
    /// Held thumbnails (a small one kept as a buffer, a large one in an in-memory file) and
    /// their URLs.
    static func held() -> (hot: HotThumbnails, small: (url: String, body: [UInt8]), large: (url: String, body: [UInt8])) {
        let hot = HotThumbnails(budget: 64 << 20)
        func hold(_ content: ContentHash, _ body: [UInt8]) -> (String, [UInt8]) {
            let key = ThumbnailSpec(size: 256, scale: 1).key(for: content)
            hot.insert(key, HotThumbnails.Entry(body: ByteBuffer(bytes: body), contentType: "image/png", etag: "\"\(content.hex)\"",
                                                checked: MonotonicClock.coarseNanoseconds()))
            return ("/thumbnails/\(content.hex)?size=256", body)
        }
        let small = hold(ContentHash(high: 7, low: 9), (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let large = hold(ContentHash(high: 8, low: 9), (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        return (hot, small, large)
    }

    /// What the stand-in for the HTTP server was handed, a connection's bytes each.
    final class Handed: Sendable {
        private let all = Mutex<[[UInt8]]>([])
        func append(_ read: [UInt8]) { all.withLock { $0.append(read) } }
        var requests: [String] { all.withLock { $0 }.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// A started front whose connections handed on go to a stand-in for the HTTP server: it keeps
    /// the bytes it was given, answers 418 with them as the body, and closes.
    static func front(_ hot: HotThumbnails, threads: Int = 1, idleTimeout: Double = 60,
                      policy: AccessPolicy = AccessPolicy(token: "secret", tokenForReads: false, hosts: nil)) throws -> (HitFront, Handed) {
        let handed = Handed()
        let front = try HitFront(address: "127.0.0.1", port: 0, threads: threads, idleTimeout: idleTimeout, hot: hot,
                                 policy: policy) { descriptor, read in
            handed.append(read)
            let reply = Array("HTTP/1.1 418 I'm a teapot\r\nContent-Length: \(read.count)\r\n\r\n".utf8) + read
            var sent = 0
            while sent < reply.count {
                let n = reply[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 { sent += n } else if errno != EAGAIN && errno != EINTR { break }
            }
            close(descriptor)
        }
        front.start()
        return (front, handed)
    }

    @Test func hitsAreAnsweredAndTheRestIsHandedOnInOrder() throws {
        let (hot, small, large) = Self.held()
        let (front, handed) = try Self.front(hot, threads: 2)

        // Forty large responses (12 MB) to a client that sends everything before it reads: the
        // front waits on the socket to be writable, again and again.
        let unknown = "/thumbnails/\(String(repeating: "a", count: 32))?size=256"
        let requests = [(small.url, [String: String]())] + Array(repeating: (large.url, [:]), count: 40) + [(unknown, [:]), (small.url, [:])]
        let replies = try RawHTTP.pipeline(requests, port: front.port)
        try #require(replies.count == 42, "\(replies.map { $0.status })")
        #expect(replies[0].status == 200 && replies[0].body == small.body)
        let fromFile = replies[1...40].filter { (reply: RawHTTP.Reply) -> Bool in
            reply.status == 200 && reply.body == large.body && reply.header("content-length") == "300000"
        }
        #expect(fromFile.count == 40)
        #expect(replies[0].header("etag") == "\"\(ContentHash(high: 7, low: 9).hex)\"" && replies[0].header("date")?.hasSuffix(" GMT") == true)
        // The miss, and the request behind it, went on with the connection, unanswered here.
        #expect(replies[41].status == 418)
        let rest = replies[41].text
        #expect(rest.hasPrefix("GET \(unknown) HTTP/1.1\r\n") && rest.contains("GET \(small.url) HTTP/1.1\r\n") && rest.hasSuffix("\r\n\r\n"), "\(rest)")
        #expect(handed.requests.count == 1)
    }

    /// A request the front will not answer goes on whole, with the connection: a token or a Host
    /// the policy refuses (the HTTP server then says why), a condition, a body, a close.
    @Test func whatTheFrontWillNotAnswerGoesOnWhole() throws {
        let (hot, small, _) = Self.held()
        let (front, handed) = try Self.front(hot, policy: AccessPolicy(token: "secret", tokenForReads: true, hosts: ["127.0.0.1"]))
        let authorized = ["Authorization": "Bearer secret"]
        let refused: [[String: String]] = [[:], ["Authorization": "Bearer wrong"], authorized.merging(["Host": "elsewhere.example"]) { $1 },
                                           authorized.merging(["If-None-Match": "\"x\""]) { $1 }, authorized.merging(["Content-Length": "0"]) { $1 }]
        for headers in refused {
            // Kept alive, so that only what it carries can send it on; the request behind goes along.
            let replies = try RawHTTP.pipeline([(small.url, headers), (small.url, authorized)], port: front.port)
            let statuses = replies.map { $0.status }
            #expect(statuses == [418], "\(headers): \(statuses)")
        }
        let answered = try RawHTTP.pipeline([(small.url, authorized), (small.url, authorized)], port: front.port)
        #expect(answered.map { $0.status } == [200, 418] && answered.first?.body == small.body, "the second asks to close")
        let firsts = handed.requests
        #expect(firsts.count == refused.count + 1 && firsts.allSatisfy { $0.hasPrefix("GET \(small.url) HTTP/1.1\r\n") }, "\(firsts)")
        #expect(firsts.last?.contains("Connection: close") == true)
    }

    /// A head that comes a byte at a time is answered once whole; one whose lines end in a bare
    /// LF goes on at its first line's end, not when the connection or the limit ends it.
    @Test func aHeadInPiecesIsAnsweredWhenWhole() throws {
        let (hot, small, _) = Self.held()
        let (front, handed) = try Self.front(hot)
        let whole = try RawHTTP.send(Array("GET \(small.url) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), port: front.port, piece: 1)
        #expect(whole.starts(with: Array("HTTP/1.1 200 OK\r\n".utf8)) && whole.suffix(small.body.count).elementsEqual(small.body))
        let bare = try RawHTTP.send(Array("GET \(small.url) HTTP/1.1\nHost: 127.0.0.1\n".utf8), port: front.port, piece: 8)
        #expect(bare.starts(with: Array("HTTP/1.1 418".utf8)), "\(String(decoding: bare, as: UTF8.self))")
        #expect(handed.requests.count == 1)
    }

    /// The parser answers only whole, plain requests: every shorter prefix is incomplete.
    @Test func theParserWaitsForTheWholeHeadAndRefusesTheUnusual() {
        let request = Array("GET /thumbnails/ab?size=256 HTTP/1.1\r\nHost: 127.0.0.1\r\ncookie: a=1\r\nCookie: b=2\r\n\r\nGET /next".utf8)
        let whole = request.count - "GET /next".utf8.count
        for end in 0..<whole {
            #expect(request[..<end].withUnsafeBytes { RawRequest.parse($0) } == .incomplete, "prefix of \(end) bytes")
        }
        let parsed = request.withUnsafeBytes { RawRequest.parse($0) }
        #expect(parsed == .get(length: whole, RawRequest.Head(target: "/thumbnails/ab?size=256", host: "127.0.0.1", cookies: ["a=1", "b=2"])))
        for odd in ["POST / HTTP/1.1\r\n\r\n", "GET / HTTP/1.0\r\n\r\n", "GET /a b HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\nHost: x\r\n\r\n",
                    "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                    "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", "GET / HTTP/1.1\r\nConnection: close\r\n\r\n"] {
            #expect(Array(odd.utf8).withUnsafeBytes { RawRequest.parse($0) } == .other, "\(odd.debugDescription)")
        }
    }

    /// A connection that sends nothing, one that sends part of a head and stops, and one idle
    /// after its answer are each closed once they have waited longer than the front allows; the
    /// answer was sent first. Before, each held its descriptor until the client went.
    @Test func idleConnectionsAreClosed() throws {
        let (hot, small, _) = Self.held()
        // Two loops: the first deals every other connection to the second, which must know them
        // before they send anything.
        let (front, handed) = try Self.front(hot, threads: 2, idleTimeout: 0.5)
        let hit = Array("GET \(small.url) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        for bytes in [[], [], Array("GET /thumbnails/".utf8), Array("GET /thumbnails/".utf8), hit, hit] {
            let (received, closed) = try RawHTTP.sendAndIdle(bytes, port: front.port, seconds: 10)
            #expect(closed, "open after 10 s, having sent \(bytes.count) bytes")
            if bytes == hit {
                let reply = try #require(try? RawHTTP.parse(received, method: "GET"))
                #expect(reply.status == 200 && reply.body == small.body)
            } else {
                #expect(received.isEmpty)
            }
        }
        #expect(handed.requests.isEmpty)
    }
}
