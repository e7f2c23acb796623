import CThumbcacheProcess
#if canImport(Glibc)
import Glibc
#endif
import CThumbcacheDescriptors
import ThumbcacheImaging
import ThumbcacheSync

/// One worker process: its channel, its standard error, and how it ended.
///
/// `@unchecked Sendable`: the pool hands a worker to one thread at a time (checked out while in
/// use), and `served` is touched only by that thread; `idleSince` only under the pool's lock.
final class WorkerProcess: @unchecked Sendable {
    let pid: pid_t
    let family: WorkerFamily
    let channel: WorkerChannel
    private let errors: Int32
    /// The confinement layers its hello named.
    private(set) var layers: [String] = []
    /// Forked from this process rather than spawned from a program of its own.
    private(set) var forked = false
    /// What errors call it while its hello is still to be read; nil once read.
    private var helloFrom: String?
    var served = 0
    /// When it was last checked in (monotonic nanoseconds).
    var idleSince: UInt64 = 0
    private var reaped = false

    private init(pid: pid_t, family: WorkerFamily, channel: Int32, errors: Int32) {
        self.pid = pid
        self.family = family
        self.channel = WorkerChannel(descriptor: channel)
        self.errors = errors
    }

    deinit {
        if !reaped { _ = finish(kill: true) }
        close(channel.descriptor)
        close(errors)
    }

    /// Starts `executable` with its channel on descriptor 3, standard error to a pipe the parent
    /// reads when it dies, and nothing of the parent's environment. Its hello is read after its
    /// first request is sent (``call(_:file:deadline:maxPixelBytes:)``): the request waits in the
    /// channel while the worker loads its libraries and confines itself, and it reads it as soon as
    /// its hello is out, sparing a round trip of a process made for one file.
    static func spawn(_ configuration: WorkerPool.Configuration, family: WorkerFamily, executable: String,
                      expecting format: ImageFormat? = nil) throws(WorkerFailure.Reason) -> WorkerProcess {
        try launch(family: family, name: executable, forked: false) { channel, errors throws(WorkerFailure.Reason) in
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, errors, 2)
            posix_spawn_file_actions_adddup2(&actions, channel, WorkerProtocol.channelDescriptor)
            // Default dispositions and an empty mask: the parent's ignored SIGPIPE must not carry over.
            var attributes = posix_spawnattr_t()
            tc_spawnattr_init_default_signals(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }

            let arguments = [executable] + Self.arguments(configuration, expecting: format)
            // The Swift runtime's crash backtracer would try to start a process; a worker may not.
            let environment = ["SWIFT_BACKTRACE=enable=no"]
            var pid: pid_t = 0
            let rc = withCStrings(arguments) { argv in
                withCStrings(environment) { envp in posix_spawn(&pid, executable, &actions, &attributes, argv, envp) }
            }
            guard rc == 0 else { throw .unavailable("cannot start \(executable): \(Errno(rawValue: rc))") }
            return pid
        }
    }

    /// Forks this process into a worker of `fork`'s family, which this program decodes itself:
    /// the child runs as the spawned program would (channel, standard error, signals, the same
    /// arguments), without its `exec`, libraries and runtime start. Only where this process has
    /// one thread: a fork copies the caller's thread alone, and any lock another held stays held.
    /// Its hello is read after its first request, as a spawned worker's is.
    static func fork(_ configuration: WorkerPool.Configuration, _ fork: WorkerFork, family: WorkerFamily,
                     expecting format: ImageFormat? = nil) throws(WorkerFailure.Reason) -> WorkerProcess {
        if let early = WorkerFork.takeEarly(family) { return adopt(early, configuration, fork, expecting: format) }
        return try launch(family: family, name: "the forked \(family.rawValue) worker", forked: true) { channel, errors throws(WorkerFailure.Reason) in
            // The filter's pipe; without one the child builds its filter itself.
            var filter: [Int32] = [-1, -1]
            if fork.sendFilter == nil || cdesc_pipe(&filter) != 0 { filter = [-1, -1] }
            let pid = tc_fork_worker(channel, errors, filter[0])
            if pid == 0 {
                fork.run(family, Self.arguments(configuration, expecting: format) + (filter[0] >= 0 ? [WorkerProtocol.preparedFilterFlag] : []))
            }
            if filter[0] >= 0 { close(filter[0]) }
            defer { if filter[1] >= 0 { close(filter[1]) } }
            guard pid > 0 else { throw .unavailable("cannot fork a \(family.rawValue) worker: \(Errno.current)") }
            if filter[1] >= 0 { fork.sendFilter?(pid, configuration.withoutLandlock, filter[1]) }
            return pid
        }
    }

    /// The worker forked at the program's start (``EarlyWorker``), sent
    /// the arguments ``fork(_:_:family:expecting:)`` would have given it, then its filter. A child
    /// that died meanwhile fails its hello, as a forked one would.
    private static func adopt(_ early: EarlyWorker, _ configuration: WorkerPool.Configuration, _ fork: WorkerFork,
                              expecting format: ImageFormat?) -> WorkerProcess {
        let arguments = Self.arguments(configuration, expecting: format) + (fork.sendFilter != nil ? [WorkerProtocol.preparedFilterFlag] : [])
        withoutBrokenPipeSignal {
            let sent = WorkerProtocol.argumentsMessage(arguments).withUnsafeBytes { writeFully(early.arguments, $0) } == nil
            if sent { fork.sendFilter?(early.pid, configuration.withoutLandlock, early.arguments) }
        }
        close(early.arguments)
        return started(pid: early.pid, family: early.family, channel: early.channel, errors: early.errors,
                       name: "the forked \(early.family.rawValue) worker", forked: true)
    }

    /// Runs `body`, whose writes to a pipe whose reader died fail with `EPIPE` instead of ending
    /// this process: SIGPIPE blocked on this thread, and one that came discarded.
    private static func withoutBrokenPipeSignal(_ body: () -> Void) {
        var pipeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var pending = sigset_t()
        sigpending(&pending)
        let wasPending = sigismember(&pending, SIGPIPE) == 1
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        body()
        var now = timespec()
        if !wasPending { while sigtimedwait(&pipeSignal, nil, &now) == SIGPIPE {} }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }

    /// A worker's arguments after its program's name: its limits, as ``WorkerFork/run`` gets them too,
    /// and the format of the file it is started for, if known (its decoder's library is loaded at once).
    static func arguments(_ configuration: WorkerPool.Configuration, expecting format: ImageFormat? = nil) -> [String] {
        ["--memory", String(configuration.memoryLimit), "--cpu", String(configuration.cpuSeconds), "--threads", String(configuration.decodeThreads)]
            + (configuration.idlePriority ? ["--idle"] : []) + (configuration.withoutLandlock ? ["--without-landlock"] : [])
            + (format.map { ["--expect", $0.rawValue] } ?? [])
    }

    /// Makes the channel and the standard error pipe and has `launch` start the worker on their
    /// child ends (returning its pid); its hello is left for ``readHello()``.
    private static func launch(family: WorkerFamily, name: String, forked: Bool,
                               _ launch: (_ channel: Int32, _ errors: Int32) throws(WorkerFailure.Reason) -> pid_t) throws(WorkerFailure.Reason) -> WorkerProcess {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw .unavailable("socketpair: \(Errno.current)")
        }
        var pipe: [Int32] = [-1, -1]
        guard cdesc_pipe(&pipe) == 0 else {
            close(pair[0]); close(pair[1])
            throw .unavailable("pipe: \(Errno.current)")
        }
        let pid: pid_t
        do {
            defer { close(pair[1]); close(pipe[1]) }
            pid = try launch(pair[1], pipe[1])
        } catch {
            close(pair[0]); close(pipe[0])
            throw error
        }
        return started(pid: pid, family: family, channel: pair[0], errors: pipe[0], name: name, forked: forked)
    }

    /// The worker started as `pid`, by the parent's ends of its channel and its standard error
    /// (read without blocking); its hello, from `name`, is left for ``readHello()``.
    private static func started(pid: pid_t, family: WorkerFamily, channel: Int32, errors: Int32, name: String, forked: Bool) -> WorkerProcess {
        _ = fcntl(errors, F_SETFL, fcntl(errors, F_GETFL) | O_NONBLOCK)
        let worker = WorkerProcess(pid: pid, family: family, channel: channel, errors: errors)
        worker.forked = forked
        worker.helloFrom = name
        return worker
    }

    /// Reads the worker's hello (its protocol version and confinement), the first thing a worker
    /// sends; nothing once read. Throws where it cannot serve (it is killed when dropped).
    func readHello() throws(WorkerFailure.Reason) {
        guard let name = helloFrom else { return }
        helloFrom = nil
        let reply: WorkerReply
        do {
            reply = try receiveReply(deadline: MonotonicClock.nanoseconds() + 10_000_000_000, maxPixelBytes: 0).reply
        } catch {
            let status = finish(kill: true)
            // A hello that does not read is most likely a worker program of another build
            // (a partial upgrade, or a developer's build beside an installed one).
            if case .protocolViolation = error as? WorkerFailure.Reason {
                throw .unavailable("\(name) answered with a hello this thumbcache cannot read (protocol version \(WorkerProtocol.version)): "
                    + "a worker program from another build?")
            }
            throw .unavailable("\(name) did not start (\(describe(status)))\(standardErrorSuffix())")
        }
        guard let hello = reply.hello, hello.version == WorkerProtocol.version else {
            throw .unavailable("\(name) speaks protocol version \(reply.hello.map { String($0.version) } ?? "none"), this thumbcache \(WorkerProtocol.version): "
                + "a worker program from another build?")
        }
        if let error = hello.error { throw .unavailable("\(name) could not confine itself: \(error)") }
        layers = hello.layers
    }

    /// Sends `request` with the file's descriptor and reads the reply, its pixels (if it has an
    /// image) and its words (if it has a text format), which follow the pixels; before them, at a
    /// worker's first request, its hello, sent while the request waited.
    func call(_ request: WorkerRequest, file: Int32, deadline: UInt64, maxPixelBytes: Int) throws -> WorkerAnswer {
        let document = WorkerCoding.encode(request)
        do {
            try channel.send(WorkerChannel.le32(document.count) + document, attaching: file)
        } catch {
            try readHello()  // a worker that ended before it read: its hello says why, if it could
            throw error
        }
        try readHello()
        return try receiveReply(deadline: deadline, maxPixelBytes: maxPixelBytes)
    }

    private func receiveReply(deadline: UInt64, maxPixelBytes: Int) throws -> WorkerAnswer {
        let head = try channel.receive(count: 8, deadline: deadline)
        let documentLength = WorkerChannel.readLE32(head, at: 0), payloadLength = WorkerChannel.readLE32(head, at: 4)
        // Lengths are checked before anything is allocated for them.
        guard documentLength <= WorkerProtocol.maxDocumentBytes else { throw WorkerFailure.Reason.protocolViolation("a \(documentLength)-byte document") }
        guard payloadLength <= maxPixelBytes else { throw WorkerFailure.Reason.protocolViolation("\(payloadLength) bytes of pixels where at most \(maxPixelBytes) fit the box") }
        let document = try channel.receive(count: documentLength, deadline: deadline)
        let reply: WorkerReply
        do {
            reply = try WorkerCoding.decodeReply(document)
        } catch {
            throw WorkerFailure.Reason.protocolViolation("unreadable document")
        }
        // The payload is the image's pixels exactly, then words only if the reply has a text format.
        var pixelLength = 0
        if let image = reply.image {
            let (count, overflow) = image.width.multipliedReportingOverflow(by: image.height)
            guard image.width > 0, image.height > 0, !overflow, count * 4 == payloadLength || reply.textFormat != nil && count * 4 <= payloadLength else {
                throw WorkerFailure.Reason.protocolViolation("\(payloadLength) bytes for \(image.width)×\(image.height) pixels")
            }
            pixelLength = count * 4
        } else if payloadLength != 0 && reply.textFormat == nil {
            throw WorkerFailure.Reason.protocolViolation("pixels without an image")
        }
        let pixels = pixelLength > 0 ? try channel.receive(count: pixelLength, deadline: deadline) : []
        let words = payloadLength > pixelLength ? try channel.receive(count: payloadLength - pixelLength, deadline: deadline) : []
        return WorkerAnswer(reply: reply, pixels: pixels, words: words)
    }

    /// Closes the channel without waiting: the worker exits when it sees the end.
    func hangUp() { shutdown(channel.descriptor, Int32(SHUT_RDWR)) }

    /// Hangs up and will not reap: the worker exits on its own, and this process's end hands it
    /// to the system to reap.
    func abandon() {
        hangUp()
        reaped = true
    }

    /// Ends the worker (SIGKILL if `kill`, else it exits when its channel closes) and reaps it.
    /// - Returns: its wait status.
    @discardableResult
    func finish(kill: Bool) -> Int32 {
        if kill { Glibc.kill(pid, SIGKILL) } else { hangUp() }
        return reap(within: 2)
    }

    /// Reaps a worker whose channel broke: how it ended.
    func reapAfterBreak() -> Int32 { reap(within: 1) }

    /// Waits up to `seconds` for the worker to end, then kills it; returns its wait status.
    private func reap(within seconds: Double) -> Int32 {
        var status: Int32 = 0
        let deadline = MonotonicClock.nanoseconds() + UInt64(seconds * 1e9)
        var killed = false
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno != EINTR) { break }
            if r == 0 && !killed && MonotonicClock.nanoseconds() > deadline {
                Glibc.kill(pid, SIGKILL)
                killed = true
            }
            if r == 0 { usleep(500) }
        }
        reaped = true
        return status
    }

    /// What the worker wrote to standard error (the runtime's last words), at most 4 KiB.
    func standardError() -> String {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = bytes.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
        return n > 0 ? String(decoding: bytes[..<n], as: UTF8.self) : ""
    }

    private func standardErrorSuffix() -> String {
        let lines = standardError().split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }
        return lines.isEmpty ? "" : ": " + lines.prefix(3).joined(separator: " ")
    }
}

extension WorkerFailure.Reason: Error {}

func describe(_ status: Int32) -> String {
    let signal = status & 0x7F
    if signal == 0 { return "exit status \((status >> 8) & 0xFF)" }
    return signalName(signal)
}

/// Calls `body` with a NULL-terminated array of C strings.
package func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for p in pointers { free(p) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
