import Thumbcache
import ThumbcacheDocumentCodecs
import ThumbcacheSandbox
import ThumbcacheWorker

extension WorkerFork {
    /// The documents worker a one-file call forks from `thumbcache` instead of starting
    /// `thumbcache-worker-documents`: the worker's start is the cold `get` of a PDF's longest
    /// step, and a fork spares its `exec`, libraries and runtime start (Docs/PERFORMANCE.md).
    /// The child runs as that program would: `WorkerMain`, its confinement first.
    static let documents = WorkerFork(families: [.documents], sendFilter: WorkerMain.sendFilter) { family, arguments in
        WorkerMain.run(decoders: .documents, arguments: [family.executableName] + arguments)
    }
}

extension DecoderOptions {
    /// A one-file call's isolation (a quick `get`, the plug-in's call): the defaults, one worker,
    /// a document's forked (``WorkerFork/documents``).
    static let oneFile: DecoderIsolation = {
        var isolation = sandboxed(workers: 1)
        isolation.fork = .documents
        return isolation
    }()
}
