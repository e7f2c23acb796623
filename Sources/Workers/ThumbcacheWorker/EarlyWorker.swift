import Synchronization
import ThumbcacheImaging

#if canImport(Glibc)
import Glibc
#endif

/// A worker forked at its program's start, before the program knows it needs one: a constructor
/// forks `thumbcache get`'s PDF worker and the plug-in's call's (cearly.h), so that the worker
/// loads its libraries (poppler, a one-file call's longest step) and starts while the program
/// starts, opens its store and looks in it (Docs/PERFORMANCE.md). The
/// child waits on its descriptor 4 for the arguments a forked worker would have been given; the
/// pool that needs a worker of its family takes it (``WorkerFork/takeEarly(_:)``) and sends them.
/// One not taken ends with its program, whose exit closes that descriptor, or at once with
/// ``WorkerFork/discardEarly()``.
package struct EarlyWorker: Sendable {
    let pid: pid_t
    package let family: WorkerFamily
    let channel: Int32
    let errors: Int32
    /// Where its arguments, then its prepared filter, are written.
    let arguments: Int32

    /// The worker forked at start with these ends (the parent's), of `family`.
    package init(pid: pid_t, family: WorkerFamily, channel: Int32, errors: Int32, arguments: Int32) {
        (self.pid, self.family, self.channel, self.errors, self.arguments) = (pid, family, channel, errors, arguments)
    }

    /// The one a program forked, until taken.
    static let waiting = Mutex<EarlyWorker?>(nil)

    /// The worker a constructor forked (cearly.h's record: its family's name, `char[12]`); nil
    /// for a family this build does not know.
    package init?<Name>(pid: pid_t, familyName: Name, channel: Int32, errors: Int32, arguments: Int32) {
        guard let family = WorkerFamily(rawValue: Self.text(familyName)) else { return nil }
        self.init(pid: pid, family: family, channel: channel, errors: errors, arguments: arguments)
    }

    /// A zero-ended name in a C record's fixed array.
    static func text<Name>(_ name: Name) -> String {
        withUnsafeBytes(of: name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Kills it and closes its ends.
    func end() {
        kill(pid, SIGKILL)
        [channel, errors, arguments].forEach { close($0) }
    }
}

extension WorkerFork {
    /// Keeps `worker`, forked at the program's start, for the first pool that needs a worker of its
    /// family (``takeEarly(_:)``).
    package static func keepEarly(_ worker: EarlyWorker) {
        EarlyWorker.waiting.withLock { waiting in
            waiting?.end()
            waiting = worker
        }
    }

    /// In the child a constructor forked (cearly.h's record names its family and format): runs
    /// as that family's worker, which waits for its arguments; ends at once for a family this
    /// program does not fork.
    package func becomeEarlyWorker<Family, Format>(familyName: Family, formatName: Format) -> Never {
        guard let family = WorkerFamily(rawValue: EarlyWorker.text(familyName)), families.contains(family) else { exit(0) }
        run(family, [WorkerProtocol.argumentsFollowFlag, "--expect", EarlyWorker.text(formatName)])
    }

    /// The worker of `family` forked at the program's start, if one waits; it is this caller's then.
    static func takeEarly(_ family: WorkerFamily) -> EarlyWorker? {
        EarlyWorker.waiting.withLock { early in
            guard let worker = early, worker.family == family else { return nil }
            early = nil
            return worker
        }
    }

    /// Whether a worker of `family` forked at the program's start waits to be taken.
    static func hasEarly(_ family: WorkerFamily) -> Bool {
        EarlyWorker.waiting.withLock { $0?.family == family }
    }

    /// Ends the worker forked at the program's start, if it was not taken: a call answered
    /// otherwise (a hit, the daemon) leaves no process loading libraries on the other core.
    package static func discardEarly() {
        EarlyWorker.waiting.withLock { early in defer { early = nil }; return early }?.end()
    }
}
