import CThumbcacheProcess
import ThumbcacheImaging

/// Families whose workers a program forks from itself instead of spawning the family's program:
/// for a program that links those families' decoders and starts one worker per run (the plug-in's
/// `thumbcache-thumbnailer`), where a worker's `exec`, libraries and runtime start are a fifth of
/// the call (Docs/PERFORMANCE.md). The child confines itself exactly as the program would.
package struct WorkerFork: Sendable, Hashable {
    package let families: Set<WorkerFamily>
    /// The worker's whole life in the child (`WorkerMain.run`), given its family and the arguments
    /// the family's program would get after its name.
    package let run: @Sendable (WorkerFamily, [String]) -> Never
    /// Builds the child's system-call filter in the parent, right after the fork, and writes it to
    /// the descriptor given (the child's pid, whether it goes without Landlock): the child loads
    /// it instead of building it, which a PDF's worker would otherwise do after loading poppler,
    /// on the call's longest path (Docs/PERFORMANCE.md). Nil: the child builds its own.
    package let sendFilter: (@Sendable (_ child: pid_t, _ withoutLandlock: Bool, _ descriptor: Int32) -> Void)?

    package init(families: Set<WorkerFamily>, sendFilter: (@Sendable (pid_t, Bool, Int32) -> Void)? = nil,
                 run: @escaping @Sendable (WorkerFamily, [String]) -> Never) {
        self.families = families
        self.sendFilter = sendFilter
        self.run = run
    }

    /// Whether a worker of `family` may be forked now: it is one of the families, and one forked at
    /// the program's start waits, or this process has a single thread (a fork copies the calling
    /// thread alone, and a lock another thread held would stay held in the child). Otherwise the
    /// family's program is spawned.
    func forks(_ family: WorkerFamily) -> Bool {
        families.contains(family) && (Self.hasEarly(family) || tc_thread_count() == 1)
    }

    package static func == (a: WorkerFork, b: WorkerFork) -> Bool { a.families == b.families }
    package func hash(into hasher: inout Hasher) { hasher.combine(families) }
}
