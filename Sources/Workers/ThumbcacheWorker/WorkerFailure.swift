/// A file could not be decoded because its worker process failed: it crashed, ran past its time
/// or memory, broke the protocol, or could not be started.
public struct WorkerFailure: Error, Sendable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The worker died of a signal while decoding (SIGSEGV, SIGABRT, SIGSYS for a forbidden system call…).
        case crashed(signal: Int32)
        /// Killed by someone else (SIGKILL not sent by the pool: the OOM killer, a user): not the file's fault.
        case killed(signal: Int32)
        /// Ran past the wall-clock limit per file and was killed.
        case timedOut(seconds: Double)
        /// Ran out of its address-space limit.
        case exceededMemory(bytes: Int)
        /// Exited on its own while decoding.
        case exited(status: Int32)
        /// Sent something that is not a valid reply (a compromised or broken worker).
        case protocolViolation(String)
        /// No worker could be started or confined.
        case unavailable(String)

        public var description: String {
            switch self {
            case .crashed(let signal) where signal == SIGSYS:
                "decoder tried a forbidden system call and was stopped (SIGSYS)"
            case .crashed(let signal): "decoder crashed (\(signalName(signal)))"
            case .killed(let signal): "decoder worker was killed from outside (\(signalName(signal)))"
            case .timedOut(let seconds): "timed out after \(formatSeconds(seconds)) s"
            case .exceededMemory(let bytes): "exceeded the decoder's memory limit of \(formatBytes(bytes))"
            case .exited(let status): "decoder worker exited with status \(status)"
            case .protocolViolation(let what): "decoder worker sent an invalid reply: \(what)"
            case .unavailable(let why): "no sandboxed decoder: \(why)"
            }
        }
    }

    public var path: String
    public var reason: Reason

    package init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }

    /// True if the same bytes would fail the same way again (so the failure is remembered):
    /// not for an outside kill or a worker that could not be started.
    public var isContentFault: Bool {
        switch reason {
        case .killed, .unavailable: false
        default: true
        }
    }

    /// Whether `error` is a worker killed from outside: a failure of the moment, which the next
    /// attempt does not repeat.
    package static func wasKilled(_ error: any Error) -> Bool {
        guard let failure = error as? WorkerFailure, case .killed = failure.reason else { return false }
        return true
    }
}

#if canImport(Glibc)
import Glibc
#endif

func signalName(_ signal: Int32) -> String {
    let names: [Int32: String] = [SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE",
                                  SIGSYS: "SIGSYS", SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU", SIGTRAP: "SIGTRAP"]
    return names[signal] ?? "signal \(signal)"
}

func formatSeconds(_ s: Double) -> String {
    s == s.rounded() ? String(Int(s)) : String(s)
}

func formatBytes(_ bytes: Int) -> String {
    if bytes >= 1 << 30, bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
    if bytes >= 1 << 20 { return "\(bytes >> 20) MiB" }
    return "\(bytes) bytes"
}
