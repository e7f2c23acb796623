import Glibc
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Synchronization
import Thumbcache

/// Answers `GET /thumbnails/{hash}` hits of ``HotThumbnails`` on the event loop that read the
/// request, in front of Hummingbird: a hit then costs no task, no router and no middleware, which
/// were most of a hit's time (Docs/PERFORMANCE.md, "Serving"). It sits below the conversion to
/// HTTP types so that a held file goes out as a file region (`sendfile`). It applies the same
/// access policy and sends the same headers as the router's endpoint; everything else passes
/// through untouched: misses, other requests, HTTP/1.0, requests behind one still being answered
/// (responses stay in order), and any request while the client is not reading (Hummingbird's
/// writer then applies back-pressure).
final class HotThumbnailResponder: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let hot: HotThumbnails
    private let policy: AccessPolicy
    /// Requests handed on whose response has not ended yet.
    private var handedOn = 0
    /// The body and end of a request answered here are dropped.
    private var answered = false

    init(hot: HotThumbnails, policy: AccessPolicy) {
        self.hot = hot
        self.policy = policy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if handedOn == 0, context.channel.isWritable, let reply = answer(request) {
                answered = true
                switch reply {
                case .notModified(let head):
                    context.write(wrapOutboundOut(.head(head)), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                case .ok(let entry):
                    send(entry, context: context)
                }
                return
            }
            handedOn += 1
        case .body:
            if answered { return }
        case .end:
            if answered {
                answered = false
                return
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { handedOn -= 1 }
        context.write(data, promise: promise)
    }

    /// Writes `entry`'s `200`. The head goes through NIO's encoder even though it could be bytes
    /// made once: the encoder pairs each response with its request's method (a `HEAD`'s body is
    /// dropped), and a response written past it would misframe the ones after it.
    private func send(_ entry: HotThumbnails.Entry, context: ChannelHandlerContext) {
        var fields = entry.headers
        fields.add(name: "Date", value: HTTPDate.now())
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: fields))), promise: nil)
        switch entry.payload {
        case .buffer(let body):
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case .file(let file):
            // Corked until flushed, the head and the file's pages leave as one segment, not two
            // (nginx's tcp_nopush).
            let options = context.channel.syncOptions
            let corked = (try? options?.setOption(Self.cork, value: 1)) != nil
            let (region, finished) = file.region()
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenComplete { _ in finished() }
            context.write(wrapOutboundOut(.body(.fileRegion(region))), promise: written)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            if corked { try? options?.setOption(Self.cork, value: 0) }
        }
    }

    private enum Reply {
        case ok(HotThumbnails.Entry)
        case notModified(HTTPResponseHead)
    }

    /// The response to `request` if it is a permitted HTTP/1.1 `GET` of a thumbnail held in memory.
    private func answer(_ request: HTTPRequestHead) -> Reply? {
        guard request.method == .GET, request.version == .http1_1 else { return nil }
        let headers = request.headers
        guard let entry = hot.entry(target: request.uri),
              request.isKeepAlive,
              policy.permitsRead(authority: headers.first(name: "host"),
                                 credential: policy.credential(authorization: headers.first(name: "authorization"), cookies: headers["cookie"]))
        else { return nil }
        if let tags = headers.first(name: "if-none-match"), ThumbnailEndpoints.matches(tags, entry.etag) {
            var fields = HTTPHeaders(ThumbnailEndpoints.notModifiedFields(entry.etag))
            fields.add(name: "X-Content-Type-Options", value: RequestGuardHeaders.noSniff)
            fields.add(name: "Date", value: HTTPDate.now())
            return .notModified(HTTPResponseHead(version: .http1_1, status: .notModified, headers: fields))
        }
        return .ok(entry)
    }

    private static let cork = ChannelOptions.tcpOption(NIOBSDSocket.Option(rawValue: TCP_CORK))
}

/// Puts ``HotThumbnailResponder`` into each connection's pipeline of Hummingbird's HTTP/1 channel,
/// in front of the conversion to HTTP types.
struct HotHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let hot: HotThumbnails
    let policy: AccessPolicy

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { [hot, policy] value in
            let pipeline = channel.pipeline.syncOperations
            let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
            try pipeline.addHandler(HotThumbnailResponder(hot: hot, policy: policy), position: .before(codec))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// The `Date` header's text (RFC 9110 IMF-fixdate), made once a second.
enum HTTPDate {
    private static let last = Mutex<(second: Int, text: String)>((-1, ""))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        let second = time(nil)
        return last.withLock { cached in
            if cached.second == second { return cached.text }
            cached = (second, text(second))
            return cached.text
        }
    }

    /// `second` (since 1970) as IMF-fixdate (a `Last-Modified`).
    static func text(_ second: Int) -> String {
        var t = tm()
        var s = time_t(second)
        gmtime_r(&s, &t)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(t.tm_wday)]), \(two(t.tm_mday)) \(months[Int(t.tm_mon)]) \(1900 + t.tm_year) "
            + "\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
    }
}
