import CThumbcacheDescriptors
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Thumbcache
import ThumbcacheSync

/// Owns `serve`'s listening socket and answers plain HTTP/1.1 `GET`s of thumbnails held in
/// memory (``HotThumbnails``) itself, on an `epoll` loop per core: a hit costs a read, a parse, a
/// look-up and one `sendmsg` (or a `send` and a `sendfile`), where NIO's channel pipeline,
/// promises and write queue were most of its CPU (Docs/PERFORMANCE.md, "A front of our own for
/// held thumbnails").
///
/// At a connection's first request it does not answer (a miss, another path, anything
/// ``RawRequest`` leaves to a real parser, a Host or a token the policy refuses) it gives the
/// connection, with that request's bytes and all after them, to the HTTP server for good
/// (``HandOff``). Everything answered before is sent by then, so responses stay in order.
final class HitFront: Sendable {
    /// Gives a connection, and what was read of it from a request's first byte, to the HTTP server.
    typealias HandOff = @Sendable (_ descriptor: Int32, _ read: [UInt8]) -> Void

    /// The bound port: the one asked for, or the one the system chose for 0.
    let port: Int
    let listener: Int32
    /// Each loop's `epoll` instance; the first also watches the listener and deals the
    /// connections it accepts out to all, in turn (as NIO's acceptor does to its event loops).
    let loops: [Int32]
    let hot: HotThumbnails
    let policy: AccessPolicy
    let handOff: HandOff
    /// Connections dealt to each loop and not yet taken into its state. A loop takes them at
    /// every wake before its events, so that it knows every connection it watches, and closes
    /// one that sends nothing at all once it has been idle too long.
    let arrivals: Mutex<[[Int32]]>
    /// Seconds a connection may wait for its next request to be complete, or a response for the
    /// client to take more of it (``ThumbnailServer/Configuration/idleTimeout``).
    let idleTimeout: Double

    /// A request head longer than this goes to the HTTP server, whose limits apply.
    static let headLimit = 8192

    /// - Parameter threads: loops, each on a thread of its own (one per core).
    init(address: String, port: Int, threads: Int, idleTimeout: Double, hot: HotThumbnails, policy: AccessPolicy,
         handOff: @escaping HandOff) throws(ListenFailure) {
        // A client gone mid-response must cost an error, not the process (NIO ignores it too).
        signal(SIGPIPE, SIG_IGN)
        (listener, self.port) = try Self.listen(address: address, port: port)
        loops = (0..<max(1, threads)).map { _ in epoll_create1(Int32(EPOLL_CLOEXEC)) }
        guard loops.allSatisfy({ $0 >= 0 }), HitLoop.watch(listener, in: loops[0], events: EPOLLIN.rawValue, op: EPOLL_CTL_ADD) else {
            let reason = String(cString: strerror(errno))
            for fd in loops + [listener] where fd >= 0 { close(fd) }
            throw ListenFailure(description: "cannot watch the listening socket: \(reason)")
        }
        self.hot = hot
        self.policy = policy
        self.handOff = handOff
        self.idleTimeout = idleTimeout
        arrivals = Mutex(loops.map { _ in [] })
    }

    /// Starts the loops; they serve for the process's life.
    func start() {
        for number in loops.indices {
            pthread_detach(startThread { [self] in HitLoop(front: self, number: number).run() })
        }
    }

    /// The held entry `head` asks for, if its Host and credentials may read it.
    func answer(_ head: RawRequest.Head) -> HotThumbnails.Entry? {
        guard let entry = hot.entry(target: head.target),
              policy.permitsRead(authority: head.host, credential: policy.credential(authorization: head.authorization, cookies: head.cookies))
        else { return nil }
        return entry
    }

    /// Why the address could not be listened on.
    struct ListenFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// A non-blocking socket listening on `address`:`port` (a name, IPv4 or IPv6), and its port.
    private static func listen(address: String, port: Int) throws(ListenFailure) -> (Int32, Int) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(address, String(port), &hints, &found)
        guard rc == 0, let info = found else { throw ListenFailure(description: "cannot listen on \(address): \(String(cString: gai_strerror(rc)))") }
        defer { freeaddrinfo(found) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ListenFailure(description: "cannot make a socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, Glibc.listen(fd, 256) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ListenFailure(description: "cannot listen on \(address):\(port): \(reason)")
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        // sockaddr_in and sockaddr_in6 both keep the port, in network order, after the family.
        let networkPort = withUnsafeBytes(of: bound) { $0.load(fromByteOffset: 2, as: UInt16.self) }
        return (fd, Int(UInt16(bigEndian: networkPort)))
    }
}

/// One thread's connections, on an `epoll` instance of its own. Level-triggered: a loop reads a
/// socket when it has bytes and writes it only while a response is left over. A connection
/// comes with the front's arrivals, taken at each wake before the events.
private final class HitLoop {
    private let front: HitFront
    private let epoll: Int32
    private var connections: [Int32: HitConnection] = [:]
    private var scratch = [UInt8](repeating: 0, count: 16 << 10)
    /// The loop the next accepted connection goes to (the first loop's count).
    private var dealt = 0
    /// Its place in the front's loops (and arrival lists).
    private let number: Int
    /// When the connections were last looked through for idle ones.
    private var swept: UInt64 = 0

    init(front: HitFront, number: Int) {
        self.front = front
        self.number = number
        epoll = front.loops[number]
    }

    func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        // Often enough that a connection outlives its time by a quarter of it at most.
        let sweepEvery = max(0.05, min(1, front.idleTimeout / 4))
        let (sweepNanoseconds, idleNanoseconds) = (UInt64(sweepEvery * 1e9), UInt64(front.idleTimeout * 1e9))
        while true {
            let count = epoll_wait(epoll, &events, Int32(events.count), Int32(sweepEvery * 1000))
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            let now = MonotonicClock.coarseNanoseconds()
            let arrived = front.arrivals.withLock { lists in
                defer { lists[number].removeAll(keepingCapacity: true) }
                return lists[number]
            }
            for fd in arrived where connections[fd] == nil {
                adopt(fd, now: now)
            }
            if now &- swept >= sweepNanoseconds {
                swept = now
                closeIdle(now: now, after: idleNanoseconds)
            }
            for event in events[0..<Int(count)] {
                let fd = event.data.fd
                if fd == front.listener {
                    acceptAll()
                    continue
                }
                // Known from the arrivals taken above; adopted anyway rather than leave a
                // level-triggered event to come back forever.
                let connection = connections[fd] ?? adopt(fd, now: now)
                if event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 && event.events & EPOLLIN.rawValue == 0 {
                    drop(connection)
                } else if connection.pending.isEmpty || flush(connection) {
                    readable(connection)
                }
            }
        }
    }

    @discardableResult
    static func watch(_ fd: Int32, in epoll: Int32, events: UInt32, op: Int32) -> Bool {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        return epoll_ctl(epoll, op, fd, &event) == 0
    }

    @discardableResult
    private func watch(_ fd: Int32, events: UInt32, op: Int32) -> Bool { Self.watch(fd, in: epoll, events: events, op: op) }

    /// A connection dealt to this loop.
    @discardableResult
    private func adopt(_ fd: Int32, now: UInt64) -> HitConnection {
        let connection = HitConnection(fd, since: now)
        connections[fd] = connection
        return connection
    }

    /// Closes the connections that waited longer than the front allows: for a request's head to
    /// be complete (since the connection came or its last request was answered), or for the
    /// client to take more of a response.
    private func closeIdle(now: UInt64, after idle: UInt64) {
        for connection in connections.values where now > connection.since && now - connection.since > idle {
            drop(connection)
        }
    }

    private func acceptAll() {
        while true {
            let fd = cdesc_accept_nonblocking(front.listener)
            if fd < 0 {
                // Out of descriptors: the listener stays readable, so wait rather than spin.
                if errno == EMFILE || errno == ENFILE { usleep(10_000) }
                return
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let target = dealt % front.loops.count
            dealt &+= 1
            // Known to the loop before it can have an event for it: a descriptor number comes
            // back after a close, and a loop must not take a new connection for an old one.
            front.arrivals.withLock { $0[target].append(fd) }
            if !Self.watch(fd, in: front.loops[target], events: EPOLLIN.rawValue, op: EPOLL_CTL_ADD) {
                front.arrivals.withLock { $0[target].removeAll { $0 == fd } }
                close(fd)
            }
        }
    }

    /// Reads what the socket has, then answers the requests it completes.
    private func readable(_ c: HitConnection) {
        // At most four reads a wake: a client that sends faster than it reads cannot grow what
        // is held (the loop wakes again while the socket has bytes).
        for round in 1...4 {
            let n = scratch.withUnsafeMutableBytes { read(c.fd, $0.baseAddress, $0.count) }
            if n > 0 {
                c.input.append(contentsOf: scratch[0..<n])
                if n < scratch.count || round == 4 { break }
            } else if n == 0 {
                c.ended = true
                break
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN {
                break
            } else {
                return drop(c)
            }
        }
        answer(c)
    }

    /// Answers the complete requests read, while each is a hit and its response leaves at once.
    private func answer(_ c: HitConnection) {
        while c.pending.isEmpty && c.start < c.input.count {
            // Parsed again only once a line has ended since: a head sent a byte at a time costs
            // a parse per line, not one of the whole head per byte.
            let parsed = c.lineEnded() ? c.input.withUnsafeBytes { RawRequest.parse(UnsafeRawBufferPointer(rebasing: $0[c.start...])) } : .incomplete
            switch parsed {
            case .incomplete where c.input.count - c.start <= HitFront.headLimit && !c.ended:
                return c.compact()
            case .get(let length, let head):
                guard let entry = front.answer(head) else { return handOff(c) }
                c.consume(length)
                c.since = MonotonicClock.coarseNanoseconds()
                c.queue(entry, date: HTTPDate.now())
                if !flush(c) { return }
            default:
                return handOff(c)
            }
        }
        if c.pending.isEmpty {
            if c.ended { return drop(c) }
            c.compact()
        }
    }

    /// Sends what is left of the responses; false while the socket cannot take it all (then
    /// the loop waits for it to be writable, and reads nothing more meanwhile).
    private func flush(_ c: HitConnection) -> Bool {
        switch c.send() {
        case .sent:
            if c.waitsToWrite {
                c.waitsToWrite = false
                watch(c.fd, events: EPOLLIN.rawValue, op: EPOLL_CTL_MOD)
            }
            return true
        case .blocked:
            if !c.waitsToWrite {
                c.waitsToWrite = true
                watch(c.fd, events: EPOLLOUT.rawValue, op: EPOLL_CTL_MOD)
            }
            return false
        case .failed:
            drop(c)
            return false
        }
    }

    private func handOff(_ c: HitConnection) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, c.fd, nil)
        connections[c.fd] = nil
        front.handOff(c.fd, Array(c.input[c.start...]))
    }

    private func drop(_ c: HitConnection) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, c.fd, nil)
        connections[c.fd] = nil
        close(c.fd)
    }
}
