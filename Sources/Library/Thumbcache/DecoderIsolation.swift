import ThumbcacheImaging
import ThumbcacheWorker

/// Where the built-in image decoders run.
///
/// ``sandboxed`` (the default, and the CLI's) decodes in long-lived worker processes, one program
/// per family of formats (`thumbcache-worker` for images, `thumbcache-worker-vector`,
/// `thumbcache-worker-heavy`, `thumbcache-worker-documents`, `thumbcache-worker-media`), that
/// confine themselves before reading a byte (Docs/SECURITY.md): a crash, a hang, a memory blow-up
/// or an exploit in a decoder costs the file it was decoding, and the worker is replaced.
/// ``inProcess`` decodes in the calling process: for trusted files and the lowest latency. Both
/// give the same pixels and metadata.
public struct DecoderIsolation: Sendable, Hashable {
    /// True for worker processes, false for this process.
    public var isSandboxed: Bool
    /// Wall-clock seconds a file may take before its worker is killed.
    public var timeout: Double
    /// Address space per worker, in bytes.
    public var memoryLimit: Int
    /// Workers at most; nil: one per job (``Warmer``) or per core (``ThumbnailGenerator``).
    public var workers: Int?
    /// One worker program for every family (it must link every decoder); nil: `$THUMBCACHE_WORKER`,
    /// else each family's program beside this process's executable, else on `PATH`.
    public var workerExecutable: String?
    /// Seconds a worker may stay idle before it ends (the next file of its family starts another);
    /// nil keeps idle workers as long as the decoding service lasts.
    public var workerIdleExit: Double?
    /// Workers at idle CPU and I/O priority, for background work beside a user's (the daemon's watching).
    package var idlePriority = false
    /// The families whose workers a one-file call forks from its own program, which links their
    /// decoders (`thumbcache`: documents), instead of starting their programs (``WorkerFork``).
    package var fork: WorkerFork?

    /// Sandboxed workers with the default limits: 20 s and 1 GiB per file, idle workers ending after 60 s.
    public static let sandboxed = DecoderIsolation.sandboxed()

    /// Sandboxed workers with these limits.
    public static func sandboxed(timeout: Double = 20, memoryLimit: Int = 1 << 30, workers: Int? = nil,
                                 workerExecutable: String? = nil, workerIdleExit: Double? = 60) -> DecoderIsolation {
        DecoderIsolation(isSandboxed: true, timeout: timeout, memoryLimit: memoryLimit, workers: workers, workerExecutable: workerExecutable,
                         workerIdleExit: workerIdleExit)
    }

    /// Decoding in this process.
    public static let inProcess = DecoderIsolation(isSandboxed: false, timeout: 0, memoryLimit: 0, workers: nil, workerExecutable: nil,
                                                   workerIdleExit: nil)

    /// The decoding service this describes, with `defaultWorkers` workers unless ``workers`` says;
    /// `forBatches`: every worker starts with the first file (warms and the daemon, which decode
    /// many), not one at a time as files come (a `get`, which decodes one).
    package func makeDecoding(defaultWorkers: Int, forBatches: Bool = false) -> any ImageDecoding {
        guard isSandboxed else { return InProcessDecoding() }
        var configuration = WorkerPool.Configuration(executable: workerExecutable, workers: workers ?? defaultWorkers, timeout: timeout,
                                                     memoryLimit: memoryLimit, startsAllAtOnce: forBatches, idleExit: workerIdleExit,
                                                     idlePriority: idlePriority)
        configuration.fork = fork
        return WorkerPool(configuration)
    }
}
