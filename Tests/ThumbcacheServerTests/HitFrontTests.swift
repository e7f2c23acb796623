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

    @Test func hitsAreAnsweredAndTheRestIsHandedOnInOrder() throws {
        let (hot, small, large) = Self.held()
        let handed = Mutex<[[UInt8]]>([])
        // A stand-in for the HTTP server: it answers 418 with the bytes it was given as the body.
        let front = try HitFront(address: "127.0.0.1", port: 0, threads: 2, hot: hot,
                                 policy: AccessPolicy(token: "secret", tokenForReads: false, hosts: nil)) { descriptor, read in
            handed.withLock { $0.append(read) }
            let reply = Array("HTTP/1.1 418 I'm a teapot\r\nContent-Length: \(read.count)\r\n\r\n".utf8) + read
            var sent = 0
            while sent < reply.count {
                let n = reply[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 { sent += n } else if errno != EAGAIN && errno != EINTR { break }
            }
            close(descriptor)
        }
        front.start()

        // Forty large responses (12 MB) to a client that sends everything before it reads: the
        // front waits on the socket to be writable, again and again.
        let unknown = "/thumbnails/\(String(repeating: "a", count: 32))?size=256"
        let requests = [(small.url, [String: String]())] + Array(repeating: (large.url, [:]), count: 40) + [(unknown, [:]), (small.url, [:])]
        let replies = try RawHTTP.pipeline(requests, port: front.port)
        try #require(replies.count == 42, "\(replies.map(\.status))")
        #expect(replies[0].status == 200 && replies[0].body == small.body)
        #expect(replies[1...40].allSatisfy { $0.status == 200 && $0.body == large.body && $0.header("content-length") == "300000" })
        #expect(replies[0].header("etag") == "\"\(ContentHash(high: 7, low: 9).hex)\"" && replies[0].header("date")?.hasSuffix(" GMT") == true)
        // The miss, and the request behind it, went on with the connection, unanswered here.
        #expect(replies[41].status == 418)
        let rest = replies[41].text
        #expect(rest.hasPrefix("GET \(unknown) HTTP/1.1\r\n") && rest.contains("GET \(small.url) HTTP/1.1\r\n") && rest.hasSuffix("\r\n\r\n"), "\(rest)")
        #expect(handed.withLock { $0.count } == 1)
    }

    /// A request the front will not answer goes on whole, with the connection: a token or a Host
    /// the policy refuses (the HTTP server then says why), a condition, a body, a close.
    @Test func whatTheFrontWillNotAnswerGoesOnWhole() throws {
        let (hot, small, _) = Self.held()
        let handed = Mutex<[[UInt8]]>([])
        let front = try HitFront(address: "127.0.0.1", port: 0, threads: 1, hot: hot,
                                 policy: AccessPolicy(token: "secret", tokenForReads: true, hosts: ["127.0.0.1"])) { descriptor, read in
            handed.withLock { $0.append(read) }
            close(descriptor)
        }
        front.start()
        let authorized = ["Authorization": "Bearer secret"]
        let refused: [[String: String]] = [[:], ["Authorization": "Bearer wrong"], authorized.merging(["Host": "elsewhere.example"]) { $1 },
                                           authorized.merging(["If-None-Match": "\"x\""]) { $1 }, authorized.merging(["Content-Length": "0"]) { $1 }]
        for headers in refused {
            // Kept alive, so that only what it carries can send it on; the request behind goes along.
            let replies = try RawHTTP.pipeline([(small.url, headers), (small.url, authorized)], port: front.port)
            #expect(replies.isEmpty, "\(headers): \(replies.map(\.status))")
        }
        let answered = try RawHTTP.pipeline([(small.url, authorized), (small.url, authorized)], port: front.port)
        #expect(answered.count == 1 && answered.first?.status == 200 && answered.first?.body == small.body, "the second asks to close")
        let firsts = handed.withLock { $0 }.map { String(decoding: $0, as: UTF8.self) }
        #expect(firsts.count == refused.count + 1 && firsts.allSatisfy { $0.hasPrefix("GET \(small.url) HTTP/1.1\r\n") }, "\(firsts)")
        #expect(firsts.last?.contains("Connection: close") == true)
    }

    /// A head that comes a byte at a time is answered once whole; one whose lines end in a bare
    /// LF goes on at its first line's end, not when the connection or the limit ends it.
    @Test func aHeadInPiecesIsAnsweredWhenWhole() throws {
        let (hot, small, _) = Self.held()
        let handed = Mutex<[[UInt8]]>([])
        let front = try HitFront(address: "127.0.0.1", port: 0, threads: 1, hot: hot,
                                 policy: AccessPolicy(token: "secret", tokenForReads: false, hosts: nil)) { descriptor, read in
            handed.withLock { $0.append(read) }
            _ = Array("HTTP/1.1 418 I'm a teapot\r\nContent-Length: 0\r\n\r\n".utf8).withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            close(descriptor)
        }
        front.start()
        let whole = try Self.exchange(Array("GET \(small.url) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), port: front.port, piece: 1)
        #expect(whole.hasPrefix("HTTP/1.1 200 OK\r\n") && whole.hasSuffix(String(decoding: small.body, as: UTF8.self)))
        let bare = try Self.exchange(Array("GET \(small.url) HTTP/1.1\nHost: 127.0.0.1\n".utf8), port: front.port, piece: 8)
        #expect(bare.hasPrefix("HTTP/1.1 418"), "\(bare)")
        #expect(handed.withLock { $0.count } == 1)
    }

    /// Sends `bytes` on a new connection `piece` bytes at a time (each its own write), then reads
    /// the one response until the connection ends or its body is whole.
    static func exchange(_ bytes: [UInt8], port: Int, piece: Int) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        for start in stride(from: 0, to: bytes.count, by: piece) {
            _ = bytes[start..<min(bytes.count, start + piece)].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            usleep(2_000)  // each piece its own segment
        }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !RawHTTP.complete(out, headOnly: false) {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
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
}
