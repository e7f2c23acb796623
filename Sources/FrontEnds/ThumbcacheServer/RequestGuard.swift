import ThumbcacheSync
import HTTPTypes
import Hummingbird
import Thumbcache

/// Who may do what: the Host a loopback server answers to (no DNS rebinding), the token for
/// reads beyond loopback and for every write, and the same-origin check on writes.
struct AccessPolicy: Sendable {
    let token: String
    /// Reads need the token too (any address but loopback, or when asked for).
    let tokenForReads: Bool
    /// Host names a loopback server answers to; nil for any.
    let hosts: Set<String>?
    static let cookie = "thumbcache_token"

    enum Credential { case header, cookie }

    /// The valid token the request carries, and how.
    func credential(_ request: HTTPRequest) -> Credential? {
        credential(authorization: request.headerFields[.authorization], cookies: request.headerFields[values: .cookie])
    }

    /// The valid token in an `Authorization` header or a `Cookie` header, and which.
    func credential(authorization: String?, cookies: some Sequence<String>) -> Credential? {
        if let auth = authorization, auth.hasPrefix("Bearer "), AccessToken.matches(auth.dropFirst(7), token) { return .header }
        for header in cookies {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingWhitespace(newlines: false) == Self.cookie,
                   AccessToken.matches(parts[1].trimmingWhitespace(newlines: false), token) { return .cookie }
            }
        }
        return nil
    }

    /// Refuses a Host a loopback server does not answer to (DNS rebinding).
    func checkHost(_ authority: String?) throws(ServeError) {
        if let hosts {
            guard hosts.contains(Self.hostName(authority ?? "")) else { throw ServeError(.misdirectedRequest, "this server answers to localhost only") }
        }
    }

    /// Whether a `GET` or `HEAD` for `authority` passes ``check(_:)``; `credential` is asked only
    /// when reads need the token.
    func permitsRead(authority: String?, credential: @autoclosure () -> Credential?) -> Bool {
        (try? checkHost(authority)) != nil && (!tokenForReads || credential() != nil)
    }

    func check(_ request: HTTPRequest) throws(ServeError) {
        try checkHost(request.authority)
        let method = request.method
        if method == .get || method == .head {
            if tokenForReads && credential(request) == nil {
                throw ServeError(.unauthorized, "the token is needed: open the address `thumbcache serve` printed, or send Authorization: Bearer")
            }
            return
        }
        guard let credential = credential(request) else {
            throw ServeError(.unauthorized, "writes need the token (Authorization: Bearer, or the cookie the page sets)")
        }
        let own = "http://" + (request.authority ?? "")
        if let origin = request.headerFields[.origin] {
            guard origin == own else { throw ServeError(.forbidden, "cross-origin write refused") }
        } else if credential == .cookie {
            // Browsers send Origin with every POST, PUT and DELETE; a cookie without it is not our page.
            throw ServeError(.forbidden, "cross-origin write refused (no Origin)")
        }
        if let site = request.headerFields[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin" {
            throw ServeError(.forbidden, "cross-site write refused")
        }
    }

    /// `host` of `host:port` or `[v6]:port`, lowercased.
    static func hostName(_ authority: String) -> String {
        // Bytes, not Characters: every request asks, and the host's delimiters are ASCII.
        let bytes = authority.utf8
        let end: String.Index
        if bytes.first == UInt8(ascii: "["), let close = bytes.firstIndex(of: UInt8(ascii: "]")) {
            end = bytes.index(after: close)
        } else {
            end = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.endIndex
        }
        let host = authority[..<end]
        return host.utf8.contains { $0 >= 0x80 || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } ? host.lowercased() : String(host)
    }

    func cookieHeader() -> String { "\(Self.cookie)=\(token); Path=/; HttpOnly; SameSite=Strict" }
}

/// Headers ``RequestGuard`` puts on every response (``HotThumbnailResponder`` too).
enum RequestGuardHeaders {
    static let noSniff = "nosniff"
}

/// Runs first for every request: the access policy, errors as JSON (HTML for pages) with their
/// status, the login link, and headers that keep pages from being framed or sniffed.
struct RequestGuard<Context: RequestContext>: RouterMiddleware {
    let policy: AccessPolicy
    let renderer: PageRenderer
    /// Loopback without `--require-token`: pages hand the browser the cookie its writes need.
    let issuesCookie: Bool

    static func isAPI(_ path: String) -> Bool {
        path.hasPrefix("/thumbnails/") || ["/thumbnail", "/search", "/info", "/tags"].contains(path)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        let api = Self.isAPI(path)
        var response: Response
        do {
            if path == "/", request.method == .get, let login = try login(request) { return login }
            try policy.check(request.head)
            response = try await next(request, context)
        } catch let error as ServeError {
            response = failure(error, api: api)
        } catch let error as HTTPError {
            response = failure(ServeError(error.status, error.status == .notFound ? "no such page" : error.status.reasonPhrase), api: api)
        } catch {
            writeStandardError("thumbcache serve: \(request.method) \(path): \(error)\n")
            response = failure(ServeError(.internalServerError, "internal error"), api: api)
        }
        response.headers[.xContentTypeOptions] = RequestGuardHeaders.noSniff
        // The page's own policy; a served file's page keeps the stricter one it came with (sandbox).
        if response.headers[.contentType]?.hasPrefix("text/html") == true, response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] =
                "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
            response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
            if issuesCookie, request.method == .get, policy.credential(request.head) == nil {
                response.headers[.setCookie] = policy.cookieHeader()
            }
        }
        return response
    }

    /// `GET /?token=…`: the link `serve` prints; sets the cookie and drops the token from the address.
    private func login(_ request: Request) throws -> Response? {
        let fields = try FormFields(request.uri.query?[...])
        guard let token = fields["token"] else { return nil }
        guard AccessToken.matches(token, policy.token) else { return failure(ServeError(.unauthorized, "wrong token"), api: false) }
        return Response(status: .seeOther, headers: [.location: "/", .setCookie: policy.cookieHeader(), .cacheControl: "no-store"])
    }

    private func failure(_ error: ServeError, api: Bool) -> Response {
        if api { return QueryEndpoints.json(status: error.status, error.json) }
        var page = PageEndpoints.html(renderer.errorPage(error))
        page.status = error.status
        return page
    }
}
