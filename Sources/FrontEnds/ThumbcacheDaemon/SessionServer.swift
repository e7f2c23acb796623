import CThumbcacheDescriptors
import Glibc
import Synchronization
import Thumbcache
import ThumbcacheSync

/// The daemon's side of ``SessionSocket``: answers each connection on a thread of its own with the
/// daemon's generator (its workers already running), a few at a time.
package final class SessionServer: Sendable {
    /// Connections answered at once; more are declined, and their askers make the thumbnail themselves.
    static let concurrentAnswers = 8

    package let path: String
    private let listener: Int32
    private let identity: (device: UInt64, inode: UInt64)
    private let generator: ThumbnailGenerator
    private let answering = Atomic<Int>(0)
    private let lastActivity = Atomic<UInt64>(MonotonicClock.nanoseconds())
    private let acceptor = Mutex<pthread_t?>(nil)

    /// Why the socket was not opened.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Listens at `path`, replacing a socket left by a daemon that ended; fails if one answers there.
    package init(path: String, generator: ThumbnailGenerator) throws(Failure) {
        if case .success(let live) = UnixSocket.connect(to: path) {
            close(live)
            throw Failure(description: "another daemon answers at \(path)")
        }
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(Errno.current)") }
        var address = UnixSocket.address(path)
        // Only this user may connect, whatever the runtime directory's own mode.
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        var info = stat()
        guard bound == 0, listen(fd, 64) == 0, stat(path, &info) == 0 else {
            let error = Errno.current
            close(fd)
            throw Failure(description: "\(path): \(error)")
        }
        self.path = path
        listener = fd
        identity = (UInt64(info.st_dev), UInt64(info.st_ino))
        self.generator = generator
    }

    /// Starts answering on a thread of its own.
    package func start() {
        acceptor.withLock { $0 = startThread { [self] in acceptLoop() } }
    }

    /// True when nothing has been asked for `seconds` and nothing is being answered.
    package func isIdle(for seconds: Double) -> Bool {
        answering.load(ordering: .acquiring) == 0
            && Double(MonotonicClock.nanoseconds() - lastActivity.load(ordering: .relaxed)) / 1e9 >= seconds
    }

    /// Stops accepting, waits (up to a minute) for the answers in flight, and removes the socket if
    /// it is still this one's.
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        if let thread = acceptor.withLock({ t in defer { t = nil }; return t }) { pthread_join(thread, nil) }
        close(listener)
        for _ in 0..<6000 where answering.load(ordering: .acquiring) > 0 { usleep(10_000) }
        var info = stat()
        if stat(path, &info) == 0, UInt64(info.st_dev) == identity.device, UInt64(info.st_ino) == identity.inode { unlink(path) }
    }

    private func acceptLoop() {
        while true {
            let connection = cdesc_accept(listener)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE { continue }
                return  // shut down
            }
            lastActivity.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
            guard answering.add(1, ordering: .acquiringAndReleasing).newValue <= Self.concurrentAnswers else {
                reply(connection, .failure(.init(description: "the daemon is answering \(Self.concurrentAnswers) already")))
                finish(connection)
                continue
            }
            pthread_detach(startThread { [self] in
                reply(connection, answer(connection))
                finish(connection)
            })
        }
    }

    private func finish(_ connection: Int32) {
        close(connection)
        lastActivity.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
        answering.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// Reads the request and makes its answer; declines what is not from this user or whose
    /// descriptor and path do not name the same regular file.
    private func answer(_ connection: Int32) -> Result<ThumbnailRepresentation, SessionSocket.Declined> {
        var peer = uid_t()
        guard cdesc_peer_uid(connection, &peer) == 0, peer == getuid() else { return .failure(.init(description: "another user asked")) }
        SessionSocket.setTimeout(connection, SO_RCVTIMEO, seconds: 5)
        SessionSocket.setTimeout(connection, SO_SNDTIMEO, seconds: 30)
        guard let (bytes, file) = receiveRequest(connection) else { return .failure(.init(description: "no request came whole")) }
        guard let file else { return .failure(.init(description: "the request came without its file's descriptor")) }
        defer { close(file) }
        guard let request = SessionSocket.Request.decode(bytes[...]), request.path.hasPrefix("/") else {
            return .failure(.init(description: "the request is malformed"))
        }
        var sent = stat(), named = stat()
        guard fstat(file, &sent) == 0, stat(request.path, &named) == 0, (sent.st_mode & S_IFMT) == S_IFREG,
              sent.st_dev == named.st_dev, sent.st_ino == named.st_ino
        else { return .failure(.init(description: "\(request.path) is not the file whose descriptor came with the request")) }
        let generator = self.generator
        let thumbnailRequest = request.thumbnailRequest
        do {
            // This is one of the server's own threads, not the cooperative pool's: it may wait.
            return .success(try waitFor { try await generator.bestRepresentation(for: thumbnailRequest) })
        } catch {
            return .failure(.init(description: "\(error)"))
        }
    }

    /// The request's bytes and the descriptor sent with them, or nil if it did not come whole in time.
    private func receiveRequest(_ connection: Int32) -> ([UInt8], Int32?)? {
        var bytes: [UInt8] = []
        var file: Int32?
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            var received: Int32 = -1
            let n = chunk.withUnsafeMutableBytes { cdesc_receive(connection, $0.baseAddress, $0.count, &received) }
            if received >= 0 {
                if file == nil { file = received } else { close(received) }
            }
            guard n > 0 else { break }
            bytes += chunk[..<n]
            guard let length = SessionSocket.Request.length(ofHeader: bytes[...]) else {
                if bytes.count >= 8 { break }
                continue
            }
            if bytes.count == length { return (bytes, file) }
            if bytes.count > length { break }
        }
        if let file { close(file) }
        return nil
    }

    private func reply(_ connection: Int32, _ result: Result<ThumbnailRepresentation, SessionSocket.Declined>) {
        let bytes = SessionSocket.Answer.encode(result)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { cdesc_send(connection, $0.baseAddress! + done, $0.count - done, -1) }
            guard n > 0 else { return }
            done += n
        }
    }
}
