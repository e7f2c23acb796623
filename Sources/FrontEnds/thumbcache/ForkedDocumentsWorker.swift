import CThumbcacheEarlyStart
import Glibc
import Thumbcache
import ThumbcacheDaemon
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

/// The documents worker `thumbcache` forks from a constructor for a `get` of a PDF (cearly.h).
enum EarlyStart {
    /// In that child: becomes the worker, which loaded poppler already and now waits for its
    /// arguments. Called first in `main`; returns elsewhere.
    static func becomeWorkerIfForked() {
        guard cearly_is_worker() != 0 else { return }
        let child = cearly_child()
        WorkerFork.documents.becomeEarlyWorker(familyName: child.family, formatName: child.format)
    }

    /// In the parent: keeps the worker for `call` (a quick call's miss takes it), or ends it where
    /// no worker of this process will decode the file: not a quick call, a remote configured, or
    /// a daemon serving the store, which is asked first.
    static func keepOrEnd(for call: GetCommand.Call?) {
        var forked = cearly_worker()
        guard cearly_take(&forked) != 0, let worker = EarlyWorker(pid: forked.pid, familyName: forked.family, channel: forked.channel,
                                                                   errors: forked.errors, arguments: forked.arguments) else { return }
        WorkerFork.keepEarly(worker)
        guard let call, !call.remote, DecoderOptions.oneFile.fork?.families.contains(worker.family) == true else { return WorkerFork.discardEarly() }
        if call.daemon, let socket = SessionSocket.path(forStoreAt: call.cache ?? ThumbnailStore.defaultDirectory), access(socket, F_OK) == 0 {
            WorkerFork.discardEarly()
        }
    }
}
