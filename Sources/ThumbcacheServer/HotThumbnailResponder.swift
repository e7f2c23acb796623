import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization
import Thumbcache

/// Answers `GET /thumbnails/{hash}` hits of ``HotThumbnails`` on the event loop that read the
/// request, in front of Hummingbird: a hit then costs no task, no router and no middleware, which
/// were most of a hit's time (Docs/PERFORMANCE.md, "Serving"). It applies the same access policy
/// and sends the same headers as the router's endpoint; everything else passes through untouched:
/// misses, other requests, requests behind one still being answered (responses stay in order),
/// and any request while the client is not reading (Hummingbird's writer then applies back-pressure).
final class HotThumbnailResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

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
            if handedOn == 0, context.channel.isWritable, let (head, body) = answer(request) {
                answered = true
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
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

    /// The response to `request` if it is a permitted `GET` of a thumbnail held in memory.
    private func answer(_ request: HTTPRequest) -> (HTTPResponse, ByteBuffer?)? {
        guard request.method == .get, let target = request.path, target.hasPrefix(Self.prefix) else { return nil }
        let rest = target.utf8.dropFirst(Self.prefix.utf8.count)
        let hashEnd = rest.firstIndex(of: UInt8(ascii: "?")) ?? rest.endIndex
        let query = hashEnd == rest.endIndex ? nil : Substring(rest[rest.index(after: hashEnd)...])
        guard request.headerFields[.connection]?.lowercased().contains("close") != true,
              (try? policy.check(request)) != nil,
              let (content, size, scale) = try? ThumbnailEndpoints.parse(hash: Substring(rest[..<hashEnd]), query: query),
              let entry = hot.entry(ThumbnailSpec(size: size, scale: scale).key(for: content))
        else { return nil }
        if let tags = request.headerFields[.ifNoneMatch], ThumbnailEndpoints.matches(tags, entry.etag) {
            var fields = ThumbnailEndpoints.notModifiedFields(entry.etag)
            fields[.xContentTypeOptions] = RequestGuardHeaders.noSniff
            fields.append(HTTPField(name: .date, value: HTTPDate.now()))
            return (HTTPResponse(status: .notModified, headerFields: fields), nil)
        }
        var fields = entry.headers
        fields.append(HTTPField(name: .date, value: HTTPDate.now()))
        return (HTTPResponse(status: .ok, headerFields: fields), entry.body)
    }

    private static let prefix = "/thumbnails/"
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
            var t = tm()
            var s = second
            gmtime_r(&s, &t)
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            let text = "\(days[Int(t.tm_wday)]), \(two(t.tm_mday)) \(months[Int(t.tm_mon)]) \(1900 + t.tm_year) "
                + "\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
            cached = (second, text)
            return text
        }
    }
}
