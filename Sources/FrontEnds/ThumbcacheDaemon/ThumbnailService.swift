import Synchronization
import Thumbcache
import ThumbcacheSync

/// The thumbnail service behind `org.freedesktop.thumbnails.Thumbnailer1`: requests of URIs in
/// a flavor (a standard size), scheduled as tumbler's are, made by worker threads of their own
/// through ``StandardThumbnailer``; what happens is reported as ``Event``s, in order per request.
package final class ThumbnailService: Sendable {
    /// Newest first for `foreground` (what a scrolling file manager shows now), arrival order for
    /// `default`, and `background` only when nothing else waits.
    package enum Scheduler: String, Sendable, CaseIterable {
        case `default`, foreground, background
    }

    /// What the bus is told.
    package enum Event: Sendable, Equatable {
        case started(UInt32)
        case ready(UInt32, [String])
        case error(UInt32, [String], code: Int32, message: String)
        case finished(UInt32)
    }

    /// A refused `Queue` call: the D-Bus error name's last part and a message.
    package struct Refusal: Error, Sendable {
        package var name: String
        package var message: String
    }

    /// What a finished request did, for the log.
    package struct Tally: Sendable, Hashable {
        package var uris = 0
        package var alreadyValid = 0
        package var fromStore = 0
        package var made = 0
        package var failed = 0
    }

    private struct Request {
        var uris: [String]
        var size: FreedesktopThumbnailCache.Size
        var next = 0
        var running = 0
        var dequeued = false
        var tally = Tally()
        var done: Bool { running == 0 && (dequeued || next == uris.count) }
    }

    private struct State {
        var requests: [UInt32: Request] = [:]
        var waiting: [Scheduler: [UInt32]] = [:]
        var lastHandle: UInt32 = 0
        var events: [Event] = []
        var stopping = false
        var lastActivity = MonotonicClock.nanoseconds()
    }

    private let thumbnailer: StandardThumbnailer
    private let state = ConditionLockedState(State())
    /// Called (from any thread) when events are waiting in ``takeEvents()``.
    private let notify: @Sendable () -> Void
    private let log: (@Sendable (UInt32, Tally) -> Void)?

    package init(thumbnailer: StandardThumbnailer, workers: Int, notify: @escaping @Sendable () -> Void,
                 log: (@Sendable (UInt32, Tally) -> Void)? = nil) {
        self.thumbnailer = thumbnailer
        self.notify = notify
        self.log = log
        for _ in 0..<max(1, workers) { detachThread { [self] in work() } }
    }

    /// Queues `uris` in `flavor`; a URI whose standard thumbnail is valid already is answered now.
    /// `dequeue` (nonzero) names an earlier request of the caller's to drop first, as the
    /// interface allows.
    package func queue(uris: [String], flavor: String, scheduler: String, dequeue: UInt32 = 0) throws(Refusal) -> UInt32 {
        guard let size = FreedesktopThumbnailCache.Size(rawValue: flavor) else {
            throw Refusal(name: "UnsupportedFlavor", message: "no flavor '\(flavor)': normal, large, x-large or xx-large")
        }
        let scheduler = Scheduler(rawValue: scheduler) ?? .default
        if dequeue != 0 { self.dequeue(dequeue) }
        // Checked before the request waits: a warm cache answers without a worker.
        let cache = thumbnailer.cache
        var valid: [String] = [], rest: [String] = []
        for uri in uris {
            if let path = FileURI.path(of: uri), let snapshot = try? FileSnapshot.of(path: path),
                FreedesktopThumbnailCache.isValid(thumbnailAt: cache.path(forURI: uri, size: size), for: .init(uri: uri, snapshot: snapshot))
            {
                valid.append(uri)
            } else {
                rest.append(uri)
            }
        }
        let (handle, finished) = state.withLock { s -> (UInt32, Tally?) in
            s.lastHandle = s.lastHandle == UInt32.max ? 1 : s.lastHandle + 1
            let handle = s.lastHandle
            s.lastActivity = MonotonicClock.nanoseconds()
            s.events.append(.started(handle))
            if !valid.isEmpty { s.events.append(.ready(handle, valid)) }
            var request = Request(uris: rest, size: size)
            request.tally.uris = uris.count
            request.tally.alreadyValid = valid.count
            if rest.isEmpty {
                s.events.append(.finished(handle))
                return (handle, request.tally)
            }
            s.requests[handle] = request
            s.waiting[scheduler, default: []].append(handle)
            return (handle, nil)
        }
        notify()
        if let finished { log?(handle, finished) }
        return handle
    }

    /// Drops what of `handle` has not started; it finishes when what runs ends.
    package func dequeue(_ handle: UInt32) {
        let finished = state.withLock { s -> Tally? in
            guard var request = s.requests[handle] else { return nil }
            request.dequeued = true
            for key in Scheduler.allCases { s.waiting[key]?.removeAll { $0 == handle } }
            s.requests[handle] = request
            return finishIfDone(handle, &s)
        }
        notify()
        if let finished { log?(handle, finished) }
    }

    /// The events so far, oldest first; consecutive `ready`s of one request are merged.
    package func takeEvents() -> [Event] {
        let events = state.withLock { s -> [Event] in
            defer { s.events = [] }
            return s.events
        }
        var merged: [Event] = []
        for event in events {
            if case .ready(let h, let uris) = event, case .ready(let last, let earlier)? = merged.last, last == h {
                merged[merged.count - 1] = .ready(h, earlier + uris)
            } else {
                merged.append(event)
            }
        }
        return merged
    }

    /// True when nothing is queued or running and nothing happened for `seconds`.
    package func isIdle(for seconds: Double) -> Bool {
        state.withLock { s in
            s.requests.isEmpty && Double(MonotonicClock.nanoseconds() - s.lastActivity) / 1e9 >= seconds
        }
    }

    /// Ends the worker threads once they finish what they hold.
    package func stop() {
        state.withLock { $0.stopping = true }
    }

    // MARK: Workers

    /// The next URI to make: the newest foreground request's, else the oldest default one's,
    /// else the oldest background one's.
    private func next(_ s: inout State) -> (UInt32, String, FreedesktopThumbnailCache.Size)? {
        for scheduler in [Scheduler.foreground, .default, .background] {
            guard let handle = scheduler == .foreground ? s.waiting[scheduler]?.last : s.waiting[scheduler]?.first,
                var request = s.requests[handle]
            else { continue }
            let uri = request.uris[request.next]
            request.next += 1
            request.running += 1
            if request.next == request.uris.count { s.waiting[scheduler]?.removeAll { $0 == handle } }
            s.requests[handle] = request
            return (handle, uri, request.size)
        }
        return nil
    }

    private func work() {
        while true {
            let job = state.withLock(waitingUntil: { s in s.stopping || s.waiting.values.contains { !$0.isEmpty } }) { s in next(&s) }
            guard let (handle, uri, size) = job else { return }
            var event: Event
            var outcome: StandardThumbnailer.Outcome?
            do {
                outcome = try thumbnailer.thumbnail(uri: uri, size: size)
                event = .ready(handle, [uri])
            } catch {
                event = .error(handle, [uri], code: error.code, message: error.reason)
            }
            let finished = state.withLock { s -> Tally? in
                guard var request = s.requests[handle] else { return nil }
                request.running -= 1
                switch outcome {
                case .alreadyValid: request.tally.alreadyValid += 1
                case .fromStore: request.tally.fromStore += 1
                case .made: request.tally.made += 1
                case nil: request.tally.failed += 1
                }
                s.requests[handle] = request
                s.events.append(event)
                s.lastActivity = MonotonicClock.nanoseconds()
                return finishIfDone(handle, &s)
            }
            notify()
            if let finished { log?(handle, finished) }
        }
    }

    private func finishIfDone(_ handle: UInt32, _ s: inout State) -> Tally? {
        guard let request = s.requests[handle], request.done else { return nil }
        s.requests[handle] = nil
        s.events.append(.finished(handle))
        return request.tally
    }
}
