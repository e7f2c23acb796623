import CThumbcacheProcess
import CThumbcacheSandbox
import Synchronization
import ThumbcacheImaging
import ThumbcacheSync
import ThumbcacheWorker

/// A worker executable's whole life: read its limits, confine itself, serve.
package enum WorkerMain {
    /// Confines this process (Docs/SECURITY.md) and serves requests with `decoders` until the
    /// parent closes the channel. Run by `thumbcache-worker` (and the test build's worker).
    /// What the decoders would load at their first file is loaded before the confinement only
    /// where Landlock cannot let the system's libraries be read after it.
    package static func run(decoders: ImageDecoders, arguments: [String] = CommandLine.arguments) -> Never {
        var decoders = decoders
        var arguments = arguments
        // Forked at its program's start (``EarlyWorker``): the file's library first (a PDF's loaded
        // already by the constructor that forked it), then the rest of the arguments, when the
        // program knows it needs this worker.
        if arguments.contains(WorkerProtocol.argumentsFollowFlag) {
            if let format = expectedFormat(arguments) { decoders.loadLibraries(for: format) }
            guard let rest = WorkerProtocol.readArguments(from: WorkerProtocol.channelDescriptor + 1) else { exit(0) }
            arguments = Array(arguments.prefix(1)) + rest
        }
        // A pool always passes its limits first; a person who runs the program gets told what it is.
        guard arguments.contains("--memory") else {
            let name = arguments.first.map(FilePaths.lastComponent) ?? "thumbcache-worker"
            writeStandardError("\(name): thumbcache's sandboxed decoder, which thumbcache starts with its channel on descriptor 3; "
                + "it takes no commands. For a thumbnail: thumbcache thumbnail FILE -o OUT.PNG\n")
            exit(2)
        }
        func value(_ flag: String) -> UInt64 {
            guard let i = arguments.firstIndex(of: flag), i + 1 < arguments.count else { return 0 }
            return UInt64(arguments[i + 1]) ?? 0
        }
        decoders.settings = DecodeSettings(threads: Int(value("--threads")))
        // The library of the file this worker was started for, now: it is needed next, and after
        // the confinement only Landlock would let it be read.
        if let format = expectedFormat(arguments) { decoders.loadLibraries(for: format) }
        // Before the confinement, whose system-call filter does not allow changing priorities.
        if arguments.contains("--idle") { _ = tc_process_be_idle() }
        keepDecoderBuffersInHeap()
        limitMallocArenas(2)
        confining.withLock { $0 = decoders }
        var limits = csandbox_limits(address_space: value("--memory"), cpu_seconds: value("--cpu"),
                                     channel: WorkerProtocol.channelDescriptor, load_libraries: { WorkerMain.confining.withLock { $0 }?.loadLibraries() },
                                     without_landlock: arguments.contains("--without-landlock") ? 1 : 0,
                                     prepared_filter: arguments.contains(WorkerProtocol.preparedFilterFlag) ? WorkerProtocol.channelDescriptor + 1 : -1)
        // A forked worker started on the CPUs its parent was not on; its libraries are loaded.
        tc_worker_started()
        var message = [CChar](repeating: 0, count: 256)
        let applied = csandbox_confine(&limits, &message, message.count)
        let hello: WorkerReply.Hello
        if applied < 0 {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            hello = WorkerReply.Hello(version: WorkerProtocol.version, layers: [], error: text)
        } else {
            hello = WorkerReply.Hello(version: WorkerProtocol.version, layers: layerNames(applied), error: nil)
        }
        WorkerServer.serve(decoders: decoders, hello: hello)
        exit(0)
    }

    /// The format `--expect` names, if any.
    private static func expectedFormat(_ arguments: [String]) -> ImageFormat? {
        guard let i = arguments.firstIndex(of: "--expect"), i + 1 < arguments.count else { return nil }
        return ImageFormat(rawValue: arguments[i + 1])
    }

    /// Sends a forked worker the system-call filter it would build (``WorkerFork/sendFilter``).
    package static func sendFilter(to child: pid_t, withoutLandlock: Bool, on descriptor: Int32) {
        // A failure leaves the pipe empty: the child then builds its own.
        _ = csandbox_send_filter(child, withoutLandlock ? 1 : 0, descriptor)
    }

    /// The decoders being confined, for the sandbox's callback (a C function pointer, which
    /// carries no context) that loads their libraries.
    private static let confining = Mutex<ImageDecoders?>(nil)

    static func layerNames(_ bits: Int32) -> [String] {
        let names: [(Int32, String)] = [
            (Int32(CSANDBOX_DESCRIPTORS_CLOSED), "descriptors closed"), (Int32(CSANDBOX_USER_NAMESPACE), "user namespace"),
            (Int32(CSANDBOX_MOUNT_NAMESPACE), "mount namespace"),
            (Int32(CSANDBOX_NO_NEW_PRIVS), "no new privileges"), (Int32(CSANDBOX_RLIMITS), "resource limits"),
            (Int32(CSANDBOX_SECCOMP), "seccomp"), (Int32(CSANDBOX_LANDLOCK), "landlock (fonts and libraries)"),
            (Int32(CSANDBOX_FILTER_PREPARED), "seccomp filter built by the parent"),
        ]
        return names.filter { bits & $0.0 != 0 }.map(\.1)
    }
}

#if canImport(Glibc)
import Glibc
#endif
