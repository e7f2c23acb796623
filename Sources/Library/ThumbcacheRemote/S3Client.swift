import FoundationEssentials
import ThumbcacheSync

/// What an S3-compatible service answered when it refused a request, or why no answer came.
package struct S3Failure: Error, Sendable, CustomStringConvertible {
    /// 0 when no response came.
    package var status: Int
    /// S3's error code (`NoSuchBucket`, `InvalidAccessKeyId`, `SlowDown`…), or the transport's failure.
    package var code: String
    package var message: String
    package var requestID: String?
    /// True when no connection could be made at all.
    package var connectFailed = false

    package var description: String {
        var text = status == 0 ? message : "\(code) (HTTP \(status))" + (message.isEmpty ? "" : ": \(message)")
        if let requestID { text += " [request \(requestID)]" }
        return text
    }

    /// Worth sending again after a pause: the service is busy or failed inside, or the
    /// connection broke mid-way (a connection never made is not retried: the breaker decides).
    var isRetryable: Bool {
        if status == 0 { return !connectFailed }
        return status >= 500 || status == 429 || code == "SlowDown" || code == "RequestTimeout"
    }
}

/// How often and how patiently a failed request is tried again: exponential backoff with full
/// jitter (a random pause up to base × 2ⁿ, capped), so that many clients do not retry in step.
package struct RetryPolicy: Sendable {
    package var attempts: Int
    package var base: Double
    package var cap: Double

    package init(attempts: Int = 3, base: Double = 0.05, cap: Double = 1) {
        self.attempts = attempts
        self.base = base
        self.cap = cap
    }

    func pause(afterAttempt n: Int) -> Double { Double.random(in: 0...min(cap, base * Double(1 << min(n, 20)))) }
}

/// A minimal S3 client: GET, PUT, HEAD and ListObjectsV2 on one bucket (and CreateBucket), signed with
/// SigV4, path-style or virtual-hosted, over kept-alive connections, with retries.
package final class S3Client: Sendable {
    package let bucket: String
    package let scheme: String
    /// The host (and port) requests go to: the endpoint's, or `BUCKET.` before it when virtual-hosted.
    package let host: String
    package let pathStyle: Bool
    let signer: SignatureV4?
    let http: HTTPClient
    package let retry: RetryPolicy
    /// Seconds for one request that sends a body (an upload)…
    package let timeout: Double
    /// …and for one that does not: a thumbnail comes back in milliseconds, so a store that
    /// hangs should cost a warm little before the breaker opens.
    package let readTimeout: Double

    /// - Parameters:
    ///   - pathStyle: `host/BUCKET/KEY` instead of `BUCKET.host/KEY`; nil: path-style for any
    ///     endpoint but AWS's own (and for bucket names with dots, which TLS names cannot cover).
    package init(bucket: String, configuration: AWSConfiguration, pathStyle: Bool? = nil, timeout: Double = 10, readTimeout: Double = 2,
                 connectTimeout: Double = 1, maxConnections: Int = 16, retry: RetryPolicy = RetryPolicy()) throws(S3Failure) {
        let endpoint = configuration.endpoint ?? "https://s3.\(configuration.region).amazonaws.com"
        guard let url = URLComponents(string: endpoint), let scheme = url.scheme, scheme == "http" || scheme == "https",
            let endpointHost = url.host, !endpointHost.isEmpty
        else {
            throw S3Failure(status: 0, code: "InvalidEndpoint", message: "the endpoint '\(endpoint)' is not an http:// or https:// URL")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        let authority = url.port.map { $0 == defaultPort ? endpointHost : "\(endpointHost):\($0)" } ?? endpointHost
        let usePathStyle = pathStyle ?? (configuration.endpoint != nil || bucket.contains("."))
        self.bucket = bucket
        self.scheme = scheme
        self.pathStyle = usePathStyle
        self.host = usePathStyle ? authority : "\(bucket).\(authority)"
        self.signer = configuration.credentials.map { SignatureV4(credentials: $0, region: configuration.region) }
        do {
            self.http = try HTTPClient(connectTimeout: connectTimeout, maxConnections: maxConnections)
        } catch {
            throw S3Failure(status: 0, code: "NoHTTPClient", message: error.message)
        }
        self.retry = retry
        self.timeout = timeout
        self.readTimeout = readTimeout
    }

    /// The path a key is sent under, percent-encoded.
    package func path(forKey key: String) -> String {
        (pathStyle ? "/" + SignatureV4.encode(bucket) : "") + "/" + SignatureV4.encode(key, keepingSlashes: true)
    }

    /// An object's address for anyone to GET until `expires` seconds from now (signed in the query).
    package func presignedURL(forKey key: String, expires: Int) -> String {
        guard let signer else { return "\(scheme)://\(host)\(path(forKey: key))" }
        return signer.presignedURL(scheme: scheme, host: host, path: path(forKey: key), expires: expires)
    }

    /// One request of a batch: what to send, before signing.
    package struct Operation: Sendable {
        package var method: String
        package var key: String?
        package var query: [(String, String)] = []
        package var headers: [(String, String)] = []
        package var body: [UInt8] = []

        package init(method: String, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [], body: [UInt8] = []) {
            self.method = method
            self.key = key
            self.query = query
            self.headers = headers
            self.body = body
        }
    }

    /// Sends `operations` together (retrying those that may be retried) and returns each
    /// one's response, or why it failed. A 404 is a response, not a failure.
    package func send(_ operations: [Operation], maxBody: Int = 16 << 20) -> [Result<HTTPResponse, S3Failure>] {
        var results = [Result<HTTPResponse, S3Failure>?](repeating: nil, count: operations.count)
        var pending = Array(operations.indices)
        for attempt in 0..<max(1, retry.attempts) {
            if attempt > 0 {
                sleepThread(seconds: retry.pause(afterAttempt: attempt))
            }
            let answers = http.perform(pending.map { request(for: operations[$0]) }, maxBody: maxBody)
            var again: [Int] = []
            for (i, answer) in zip(pending, answers) {
                let outcome: Result<HTTPResponse, S3Failure> = switch answer {
                case .success(let r) where (200..<300).contains(r.status) || r.status == 304 || r.status == 404 && operations[i].key != nil:
                    .success(r)
                case .success(let r): .failure(Self.failure(from: r))
                case .failure(let t): .failure(S3Failure(status: 0, code: "Transport", message: t.message, connectFailed: t.connectFailed))
                }
                results[i] = outcome
                if case .failure(let f) = outcome, f.isRetryable { again.append(i) }
            }
            pending = again
            if pending.isEmpty { break }
        }
        return results.map { $0! }
    }

    private func request(for op: Operation) -> HTTPRequest {
        let path = op.key.map { self.path(forKey: $0) } ?? (pathStyle ? "/" + SignatureV4.encode(bucket) : "/")
        let query = SignatureV4.canonicalQuery(op.query)
        let url = "\(scheme)://\(host)\(path)" + (query.isEmpty ? "" : "?" + query)
        let headers = signer?.signedHeaders(method: op.method, host: host, path: path, query: op.query, headers: op.headers,
                                            payload: op.body) ?? op.headers
        return HTTPRequest(method: op.method, url: url, headers: headers.map { "\($0.0): \($0.1)" }, body: op.body,
                           timeout: op.body.isEmpty ? readTimeout : timeout)
    }

    static func failure(from response: HTTPResponse) -> S3Failure {
        let xml = String(decoding: response.body, as: UTF8.self)
        let code = XMLText.first("Code", in: xml) ?? (response.status == 404 ? "NotFound" : response.status == 403 ? "AccessDenied" : "HTTP\(response.status)")
        return S3Failure(status: response.status, code: code, message: XMLText.first("Message", in: xml) ?? "",
                         requestID: XMLText.first("RequestId", in: xml) ?? response.header("x-amz-request-id"))
    }

    // MARK: Operations

    /// The objects' bytes, nil for those that do not exist.
    package func get(_ keys: [String], maxBody: Int) -> [Result<[UInt8]?, S3Failure>] {
        send(keys.map { Operation(method: "GET", key: $0) }, maxBody: maxBody).map { r in
            r.map { $0.status == 404 ? nil : $0.body }
        }
    }

    /// Stores objects (each replaces any object of its key).
    package func put(_ objects: [(key: String, body: [UInt8], contentType: String, metadata: [String: String])]) -> [Result<Void, S3Failure>] {
        send(objects.map { o in
            Operation(method: "PUT", key: o.key,
                      headers: [("content-type", o.contentType)] + o.metadata.sorted { $0.key < $1.key }.map { ("x-amz-meta-" + $0.key, $0.value) },
                      body: o.body)
        }).map { r in r.flatMap { $0.status == 404 ? .failure(Self.failure(from: $0)) : .success(()) } }
    }

    /// Each object's headers (`content-length`, `x-amz-meta-*`…), nil for one that does not exist.
    package func head(_ keys: [String]) -> [Result<[String: String]?, S3Failure>] {
        send(keys.map { Operation(method: "HEAD", key: $0) }).map { r in r.map { $0.status == 404 ? nil : $0.headers } }
    }

    /// Creates the bucket (an error if it exists and belongs to another account).
    package func createBucket() -> Result<Void, S3Failure> {
        send([Operation(method: "PUT", key: nil)])[0].flatMap { $0.status == 404 ? .failure(Self.failure(from: $0)) : .success(()) }
    }

    /// One page of ListObjectsV2 under `prefix`: keys with their sizes, and the token of the next page.
    package func list(prefix: String, maxKeys: Int = 1000, continuation: String? = nil)
        -> Result<(objects: [(key: String, size: Int)], next: String?), S3Failure>
    {
        var query = [("list-type", "2"), ("prefix", prefix), ("max-keys", String(maxKeys))]
        if let continuation { query.append(("continuation-token", continuation)) }
        return send([Operation(method: "GET", key: nil, query: query)])[0].flatMap { response in
            if response.status == 404 { return .failure(Self.failure(from: response)) }
            let xml = String(decoding: response.body, as: UTF8.self)
            let objects = XMLText.all("Contents", in: xml).compactMap { entry -> (String, Int)? in
                guard let key = XMLText.first("Key", in: entry) else { return nil }
                return (key, XMLText.first("Size", in: entry).flatMap(Int.init) ?? 0)
            }
            let truncated = XMLText.first("IsTruncated", in: xml) == "true"
            return .success((objects.map { (key: $0.0, size: $0.1) }, truncated ? XMLText.first("NextContinuationToken", in: xml) : nil))
        }
    }
}

/// The few elements of S3's XML answers this client reads, found by name: S3's documents are
/// flat and regular, and a full XML parser (libxml2) would be one more library at every start.
enum XMLText {
    /// The text of the first `<name>…</name>`, entities decoded.
    static func first(_ name: String, in xml: String) -> String? {
        guard let open = xml.firstRange(of: "<\(name)>"), let close = xml[open.upperBound...].firstRange(of: "</\(name)>") else {
            return nil
        }
        return decode(String(xml[open.upperBound..<close.lowerBound]))
    }

    /// The inner text of every `<name>…</name>`, raw.
    static func all(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var from = xml.startIndex
        while let open = xml[from...].firstRange(of: "<\(name)>"),
            let close = xml[open.upperBound...].firstRange(of: "</\(name)>")
        {
            found.append(String(xml[open.upperBound..<close.lowerBound]))
            from = close.upperBound
        }
        return found
    }

    static func decode(_ s: String) -> String {
        guard s.contains("&") else { return s }
        return s.replacing("&lt;", with: "<").replacing("&gt;", with: ">")
            .replacing("&quot;", with: "\"").replacing("&apos;", with: "'")
            .replacing("&amp;", with: "&")
    }
}
