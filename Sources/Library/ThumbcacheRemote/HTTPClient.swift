import ThumbcacheSync
import Glibc
import CThumbcacheHTTP

/// One HTTP request, signed and ready to send.
package struct HTTPRequest: Sendable {
    package var method: String
    package var url: String
    /// "Name: value" lines, as signed.
    package var headers: [String]
    package var body: [UInt8]
    /// Seconds for the whole request.
    package var timeout: Double

    package init(method: String, url: String, headers: [String] = [], body: [UInt8] = [], timeout: Double) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// A response: its status, headers and body.
package struct HTTPResponse: Sendable {
    package var status: Int
    /// Header names lowercased; a repeated header keeps its last value.
    package var headers: [String: String]
    package var body: [UInt8]

    package func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// No response came: the connection could not be made, broke, or timed out.
package struct HTTPTransportError: Error, Sendable, CustomStringConvertible {
    /// What libcurl said.
    package var message: String
    /// True when no connection could be made at all (refused, unresolved, connect timeout).
    package var connectFailed: Bool
    package var description: String { message }
}

/// HTTP/1.1 over libcurl: kept-alive connections (a pool of multi handles, one per calling
/// thread at a time), TLS with the system's trust store, and a batch of requests sent at once.
///
/// Blocking by design: its callers are the warm's and the uploader's own threads, never Swift's
/// cooperative pool.
package final class HTTPClient: @unchecked Sendable {
    // @unchecked Sendable: the handle is never replaced, and the shim locks its pool.
    private let client: OpaquePointer

    /// - Parameters:
    ///   - connectTimeout: seconds to open a connection.
    ///   - maxConnections: requests in flight at once per batch, and connections kept per handle.
    /// - Throws: when libcurl or libcrypto cannot be loaded (they are loaded on first use, so
    ///   that a process without a remote never maps them).
    package init(connectTimeout: Double, maxConnections: Int) throws(HTTPTransportError) {
        guard let client = tc_http_client_create(Int(connectTimeout * 1000), maxConnections) else {
            let why = tc_http_load().map { String(cString: $0) } ?? "out of memory"
            throw HTTPTransportError(message: "no HTTP client: \(why)", connectFailed: false)
        }
        self.client = client
    }

    deinit { tc_http_client_destroy(client) }

    /// Sends `requests` together; each gets its own result, in order.
    /// - Parameter maxBody: a larger response body ends its request with an error.
    package func perform(_ requests: [HTTPRequest], maxBody: Int) -> [Result<HTTPResponse, HTTPTransportError>] {
        guard !requests.isEmpty else { return [] }
        // C strings that live until the batch is done.
        var strings: [UnsafeMutablePointer<CChar>] = []
        defer { strings.forEach { free($0) } }
        func c(_ s: String) -> UnsafeMutablePointer<CChar> {
            let p = strdup(s)!
            strings.append(p)
            return p
        }
        var headerArrays: [UnsafeMutablePointer<UnsafePointer<CChar>?>] = []
        defer { headerArrays.forEach { $0.deallocate() } }
        var bodies: [UnsafeMutableRawBufferPointer] = []
        defer { bodies.forEach { $0.deallocate() } }

        var raw = requests.map { q -> tc_http_request in
            let headers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, q.headers.count))
            for (i, h) in q.headers.enumerated() { headers[i] = UnsafePointer(c(h)) }
            headerArrays.append(headers)
            var body: UnsafePointer<UInt8>?
            if !q.body.isEmpty {
                let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: q.body.count, alignment: 1)
                q.body.withUnsafeBytes { copy.copyMemory(from: $0) }
                bodies.append(copy)
                body = UnsafePointer(copy.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            return tc_http_request(method: c(q.method), url: c(q.url), headers: headers, header_count: q.headers.count,
                                   body: body, body_length: q.body.count, timeout_ms: Int(q.timeout * 1000))
        }
        var responses = [tc_http_response](repeating: tc_http_response(), count: requests.count)
        _ = raw.withUnsafeMutableBufferPointer { qs in
            responses.withUnsafeMutableBufferPointer { rs in
                tc_http_perform(client, qs.baseAddress, rs.baseAddress, requests.count, maxBody)
            }
        }
        return responses.indices.map { i in
            defer { tc_http_response_free(&responses[i]) }
            let r = responses[i]
            guard r.transport_error == 0 else {
                let message = withUnsafeBytes(of: r.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                return .failure(HTTPTransportError(message: message, connectFailed: r.connect_failed != 0))
            }
            let body = r.body.map { Array(UnsafeBufferPointer(start: $0, count: r.body_length)) } ?? []
            let headerText = r.headers.map { String(cString: $0) } ?? ""
            return .success(HTTPResponse(status: r.status, headers: Self.parseHeaders(headerText), body: body))
        }
    }

    static func parseHeaders(_ block: String) -> [String: String] {
        var headers: [String: String] = [:]
        for line in block.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingWhitespace(newlines: false)
        }
        return headers
    }
}

/// SHA-256 and HMAC-SHA-256 from OpenSSL's libcrypto (which libcurl loads anyway). Used only
/// after an ``HTTPClient`` was made, which fails when libcrypto cannot be loaded.
package enum Digest {
    package static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let rc = Array(bytes).withUnsafeBytes { b in out.withUnsafeMutableBufferPointer { tc_sha256(b.baseAddress, b.count, $0.baseAddress) } }
        precondition(rc == 0, "libcrypto is not loaded: \(tc_http_load().map { String(cString: $0) } ?? "")")
        return out
    }

    package static func hmac(key: [UInt8], _ message: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let rc = key.withUnsafeBytes { k in
            Array(message).withUnsafeBytes { m in
                out.withUnsafeMutableBufferPointer { tc_hmac_sha256(k.baseAddress, k.count, m.baseAddress, m.count, $0.baseAddress) }
            }
        }
        precondition(rc == 0, "libcrypto is not loaded: \(tc_http_load().map { String(cString: $0) } ?? "")")
        return out
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
