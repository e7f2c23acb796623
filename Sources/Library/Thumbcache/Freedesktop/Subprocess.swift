import CThumbcacheProcess
import Glibc
import ThumbcacheSync
import ThumbcacheWorker

/// A program run by path with its standard input and output on /dev/null: what the plug-in
/// sandbox needs of Foundation's `Process`, which would link corelibs Foundation into every
/// program (Docs/PERFORMANCE.md).
struct Subprocess {
    /// How a program ended.
    enum Ending: Equatable {
        case exited(Int32)
        case killed(signal: Int32)
    }

    let pid: pid_t

    /// Starts `program` with `arguments` (after its own name) in `environment` (nil: this
    /// process's), every signal at its default disposition; its standard error goes to
    /// `standardError` if given, else to /dev/null.
    init(_ program: String, _ arguments: [String], environment: [String: String]? = nil, standardError: Int32? = nil) throws(Errno) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let standardError {
            posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        tc_spawnattr_init_default_signals(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var pid: pid_t = 0
        let rc = withCStrings([program] + arguments) { argv in
            guard let environment else { return posix_spawn(&pid, program, &actions, &attributes, argv, environ) }
            return withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in posix_spawn(&pid, program, &actions, &attributes, argv, envp) }
        }
        guard rc == 0 else { throw Errno(rawValue: rc) }
        self.pid = pid
    }

    /// Waits for the program to end, at most `timeout` seconds if given: nil if it still runs then.
    func wait(timeout: Double? = nil) -> Ending? {
        let deadline = timeout.map { Double(MonotonicClock.nanoseconds()) / 1e9 + $0 }
        var pause = 0.0005
        while true {
            var status: Int32 = 0
            let flags = deadline == nil ? 0 : WNOHANG
            let r = waitpid(pid, &status, flags)
            if r == pid {
                // WIFEXITED / WTERMSIG, which Swift cannot call as the macros they are.
                let signal = status & 0x7f
                return signal == 0 ? .exited((status >> 8) & 0xff) : .killed(signal: signal)
            }
            if r == -1 && errno != EINTR { return .exited(-1) }
            guard let deadline else { continue }
            if Double(MonotonicClock.nanoseconds()) / 1e9 >= deadline { return nil }
            // A plug-in takes tens of milliseconds: poll often at first, then every 10 ms.
            sleepThread(seconds: pause)
            pause = min(pause * 2, 0.01)
        }
    }
}
