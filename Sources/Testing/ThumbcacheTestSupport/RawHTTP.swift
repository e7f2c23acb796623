import Foundation

/// An HTTP/1.1 client over a plain TCP socket that sends exactly the bytes it is given: the
/// escape tests need request targets (`/../`, `%2e%2e`, NUL) that URL types would normalize away.
package enum RawHTTP {
    /// One response: status, headers (names lowercased) and body.
    package struct Reply: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]

        package func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }
        package var text: String { String(decoding: body, as: UTF8.self) }
        /// The body as a JSON object.
        package var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Sends `method target` to 127.0.0.1:`port` with `headers` (Host and Connection: close
    /// added unless given) and reads the response to the end.
    package static func request(_ method: String = "GET", _ target: String, port: Int, headers: [String: String] = [:], body: [UInt8] = [],
                                address: String = "127.0.0.1") throws -> Reply {
        var lines = ["\(method) \(target) HTTP/1.1"]
        var all = headers
        if all["Host"] == nil { all["Host"] = "\(address):\(port)" }
        all["Connection"] = "close"
        if !body.isEmpty || method == "POST" || method == "PUT" { all["Content-Length"] = "\(body.count)" }
        for (name, value) in all.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
        let head = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        let raw = try exchange(head + body, port: port, address: address, headOnly: method == "HEAD")
        return try parse(raw, method: method)
    }

    /// Sends every request on one kept-alive connection at once (HTTP pipelining; the last one
    /// asks to close) and returns the responses in the order they came.
    package static func pipeline(_ requests: [(target: String, headers: [String: String])], port: Int, address: String = "127.0.0.1") throws -> [Reply] {
        try pipeline(requests.map { ("GET", $0.target, $0.headers) }, port: port, address: address)
    }

    /// ``pipeline(_:port:address:)`` with each request's method (a `HEAD`'s reply has no body).
    package static func pipeline(_ requests: [(method: String, target: String, headers: [String: String])], port: Int,
                                 address: String = "127.0.0.1") throws -> [Reply] {
        var bytes: [UInt8] = []
        for (i, request) in requests.enumerated() {
            var all = request.headers
            if all["Host"] == nil { all["Host"] = "\(address):\(port)" }
            if i == requests.count - 1 { all["Connection"] = "close" }
            let lines = ["\(request.method) \(request.target) HTTP/1.1"] + all.sorted(by: { $0.key < $1.key }).map { "\($0.key): \($0.value)" }
            bytes += Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        }
        let raw = try exchange(bytes, port: port, address: address, headOnly: false, untilClosed: true)
        var replies: [Reply] = []
        var start = 0
        while let end = headEnd(raw, from: start) {
            var reply = try parse(Array(raw[start..<(end + 4)]), method: "HEAD")
            let headOnly = replies.count < requests.count && requests[replies.count].method == "HEAD"
            let length = reply.status == 304 || headOnly ? 0 : Int(reply.header("content-length") ?? "") ?? 0
            start = min(raw.count, end + 4 + length)
            reply.body = Array(raw[(end + 4)..<start])
            replies.append(reply)
        }
        return replies
    }

    /// Sends `bytes` to 127.0.0.1:`port` as they are, `piece` bytes at a time (each its own
    /// write, a moment apart), and returns what came back until one response was whole.
    package static func send(_ bytes: [UInt8], port: Int, piece: Int) throws -> [UInt8] {
        try exchange(bytes, port: port, address: "127.0.0.1", headOnly: false, piece: piece)
    }

    /// Sends `bytes` (none, part of a request, or whole ones) to 127.0.0.1:`port` and then only
    /// reads (after `pause` seconds of reading nothing): what came back, and whether the server
    /// closed the connection within `seconds` of reading (false if it was still open then).
    package static func sendAndIdle(_ bytes: [UInt8], port: Int, seconds: Int, pause: Double = 0) throws -> (received: [UInt8], closed: Bool) {
        var closed = false
        let received = try exchange(bytes, port: port, address: "127.0.0.1", headOnly: false, untilClosed: true, receiveTimeout: seconds,
                                    pause: pause, ended: { closed = $0 })
        return (received, closed)
    }

    /// Sends `bytes`, reads at least `first` bytes of what comes back, runs `meanwhile` (the
    /// server's buffers then hold what it sent on), and reads on until the server closes.
    package static func fetch(_ bytes: [UInt8], port: Int, pausingAfter first: Int, meanwhile: () -> Void) throws -> [UInt8] {
        try exchange(bytes, port: port, address: "127.0.0.1", headOnly: false, untilClosed: true, midwayAt: first, midway: meanwhile)
    }

    static func exchange(_ bytes: [UInt8], port: Int, address: String, headOnly: Bool, untilClosed: Bool = false, piece: Int = .max,
                         receiveTimeout: Int = 30, pause: Double = 0, midwayAt: Int = .max, midway: () -> Void = {},
                         ended: (_ byPeer: Bool) -> Void = { _ in }) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, address, &sa.sin_addr)
        let connected = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to \(address):\(port): errno \(errno)") }
        if piece < bytes.count {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent..<min(bytes.count, sent + piece)].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // A server may answer and close before the last piece: then what it said is read.
            if n <= 0 && piece < bytes.count && (errno == EPIPE || errno == ECONNRESET) { break }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += n
            if piece < bytes.count { usleep(2_000) }  // each piece its own segment
        }
        if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while untilClosed || !complete(out, headOnly: headOnly) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                ended(n == 0 || errno == ECONNRESET)
                break
            }
            if out.count < midwayAt, out.count + n >= midwayAt { midway() }
            out += buffer[0..<n]
        }
        return out
    }

    /// True once the head and as many body bytes as Content-Length says have arrived: a peer
    /// may keep the connection open despite `Connection: close` (chromedriver does).
    package static func complete(_ raw: [UInt8], headOnly: Bool) -> Bool {
        guard let end = headEnd(raw) else { return false }
        if headOnly { return true }
        let head = String(decoding: raw[0..<end], as: UTF8.self).lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return raw.count >= end + 4 + length
    }

    /// Where the first head at or after `from` ends (the index of its blank line's CR LF CR LF).
    static func headEnd(_ raw: [UInt8], from: Int = 0) -> Int? {
        guard raw.count - from >= 4 else { return nil }
        return (from...(raw.count - 4)).first { raw[$0] == 13 && raw[$0 + 1] == 10 && raw[$0 + 2] == 13 && raw[$0 + 3] == 10 }
    }

    package static func parse(_ raw: [UInt8], method: String) throws -> Reply {
        guard let end = headEnd(raw) else {
            throw Failure(description: "no complete response (\(raw.count) bytes)")
        }
        let head = String(decoding: raw[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(head[0])") }
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(raw[(end + 4)...])
        if headers.contains(where: { $0.0 == "transfer-encoding" && $0.1.lowercased() == "chunked" }) { body = dechunk(body) }
        if method == "HEAD" { body = [] }
        return Reply(status: status, headers: headers, body: body)
    }

    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard let lineEnd = (i..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[i..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16), size > 0
            else { break }
            out += bytes[(lineEnd + 2)..<min(bytes.count, lineEnd + 2 + size)]
            i = lineEnd + 2 + size + 2
        }
        return out
    }
}
