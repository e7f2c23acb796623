import Hummingbird
import NIOHTTP1
import Synchronization
import Thumbcache
import ThumbcacheSync

/// The thumbnails served last, kept encoded in memory: a URL names immutable bytes, so a copy can
/// never go stale, and a hit skips the index, the store and the copy out of the map (the buffer
/// is shared with every response that sends it). Bounded by bytes; the oldest go first.
final class HotThumbnails: Sendable {
    /// A class, so that a hit takes one reference rather than copying (and retaining) each field.
    final class Entry: Sendable {
        /// The bytes: in a ``HeldFile`` when large enough and descriptors allow, else a buffer.
        let payload: Payload
        let size: Int
        let etag: String
        /// When the content was last found under the roots (the index may drop it later).
        private let checkedAt: Atomic<UInt64>
        /// A `200`'s headers but `Date`, made once, as ``HotThumbnailResponder`` writes them.
        let headers: HTTPHeaders
        /// The same `200`'s status line and headers as bytes, up to `Date` (``HitFront`` adds it
        /// and the blank line): what NIO's encoder writes of them.
        let rawHead: [UInt8]

        enum Payload: Sendable {
            case buffer(ByteBuffer)
            case file(HeldFile)
        }

        init(body: ByteBuffer, contentType: String, etag: String, checked: UInt64) {
            payload = HeldFile.make(body).map { .file($0) } ?? .buffer(body)
            // What it holds, not what it sends: a buffer's whole storage, and the entry with its
            // headers and key, so that the budget bounds memory.
            if case .buffer = payload { size = max(body.capacity, body.readableBytes) + Self.overhead } else { size = body.readableBytes + Self.overhead }
            self.etag = etag
            checkedAt = Atomic(checked)
            headers = HTTPHeaders([("Content-Type", contentType), ("Cache-Control", ThumbnailEndpoints.immutable), ("ETag", etag),
                                   ("Content-Length", String(body.readableBytes)), ("X-Content-Type-Options", RequestGuardHeaders.noSniff)])
            rawHead = Array(("HTTP/1.1 200 OK\r\n" + headers.map { "\($0.name): \($0.value)\r\n" }.joined()).utf8)
        }

        /// An entry's own memory beside its bytes (the object, its headers and ETag, its key twice).
        static let overhead = 512

        var checked: UInt64 { checkedAt.load(ordering: .relaxed) }

        func confirm(at now: UInt64) { checkedAt.store(now, ordering: .relaxed) }

        /// The bytes as a buffer (read back from a held file; nil if that fails).
        func body() -> ByteBuffer? {
            switch payload {
            case .buffer(let buffer): buffer
            case .file(let file): file.bytes()
            }
        }
    }

    private struct State {
        var entries: [ThumbnailKey: Entry] = [:]
        var order: [ThumbnailKey] = []
        var head = 0
        var bytes = 0
    }

    private let state = Mutex(State())
    let budget: Int
    /// How long a hit may rely on an earlier check that the content is under the roots.
    static let recheckNanoseconds: UInt64 = 10_000_000_000

    init(budget: Int) { self.budget = budget }

    /// The entry for `key`, and whether its roots check is recent enough to rely on.
    func lookup(_ key: ThumbnailKey) -> (entry: Entry, fresh: Bool)? {
        let now = MonotonicClock.coarseNanoseconds()
        return state.withLock { s in s.entries[key].map { ($0, now &- $0.checked < Self.recheckNanoseconds) } }
    }

    /// The entry for `key` if its roots check is recent enough.
    func entry(_ key: ThumbnailKey) -> Entry? {
        lookup(key).flatMap { $0.fresh ? $0.entry : nil }
    }

    /// The entry a request target (`/thumbnails/{hash}?size=…`) names, if held and its roots
    /// check is recent enough: what both hit paths (``HitFront``, ``HotThumbnailResponder``) answer.
    func entry(target: String) -> Entry? {
        guard target.utf8.starts(with: Self.prefix.utf8) else { return nil }
        let rest = target.utf8.dropFirst(Self.prefix.utf8.count)
        let hashEnd = rest.firstIndex(of: UInt8(ascii: "?")) ?? rest.endIndex
        let query = hashEnd == rest.endIndex ? nil : Substring(rest[rest.index(after: hashEnd)...])
        guard let (content, size, scale) = try? ThumbnailEndpoints.parse(hash: Substring(rest[..<hashEnd]), query: query) else { return nil }
        return entry(ThumbnailSpec(size: size, scale: scale).key(for: content))
    }

    private static let prefix = "/thumbnails/"

    /// Notes that `key`'s content was found under the roots again.
    func confirm(_ key: ThumbnailKey) {
        let now = MonotonicClock.coarseNanoseconds()
        state.withLock { $0.entries[key] }?.confirm(at: now)
    }

    func insert(_ key: ThumbnailKey, _ entry: Entry) {
        let size = entry.size
        guard size <= budget / 8 else { return }
        state.withLock { s in
            if let old = s.entries.updateValue(entry, forKey: key) {
                s.bytes -= old.size
            } else {
                s.order.append(key)
            }
            s.bytes += size
            while s.bytes > budget, s.head < s.order.count {
                if let gone = s.entries.removeValue(forKey: s.order[s.head]) { s.bytes -= gone.size }
                s.head += 1
            }
            // The queue's consumed front is dropped once it is half of it.
            if s.head > 1024 && s.head * 2 > s.order.count {
                s.order.removeFirst(s.head)
                s.head = 0
            }
        }
    }
}
