import CThumbcacheProcess
import Foundation
import ThumbcacheSync

/// A child process started with `posix_spawn` from a program built beside the test binary.
/// Its standard output is read line by line as it arrives; it is reaped with `waitpid`.
package final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: the mutable state below is guarded by `condition`.
    package let processIdentifier: pid_t
    private let condition = NSCondition()
    private var lines: [String] = []
    private var stdoutDone = false
    private var stderrText = Data()
    private var stderrDone = false
    private var exitStatus: Termination?
    /// How a child ended.
    package enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// The directory holding the built products (`.build/debug`), found from this process's binary.
    package static var productsDirectory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // On Linux the test binary is `.build/debug/<name>.xctest`; on macOS it sits inside a bundle.
        while url.path.contains(".xctest") { url.deleteLastPathComponent() }
        return url.path
    }

    /// Starts `program` (a product name, or an absolute path) with `arguments`.
    package init(program: String, arguments: [String], environment: [String: String]? = nil) throws {
        let path = program.hasPrefix("/") ? program : Self.productsDirectory + "/" + program
        var out: [Int32] = [0, 0]
        var err: [Int32] = [0, 0]
        guard pipe(&out) == 0, pipe(&err) == 0 else { throw POSIXError(.EMFILE) }
        // Close-on-exec, so that later children do not inherit these pipes and keep them open.
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var envStrings: [UnsafeMutablePointer<CChar>?]
        if let environment {
            envStrings = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        } else {
            envStrings = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { envStrings.forEach { free($0) } }
        // The child starts with default signal handling and nothing blocked: a test process's
        // blocked or ignored SIGTERM would otherwise pass to its children and their children (a
        // dbus-daemon the soak started then outlived it, deaf to SIGTERM).
        var attributes = posix_spawnattr_t()
        tc_spawnattr_init_default_signals(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envStrings)
        close(out[1])
        close(err[1])
        guard rc == 0 else {
            close(out[0])
            close(err[0])
            throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL)
        }
        processIdentifier = pid
        let outFD = out[0]
        let errFD = err[0]
        Thread.detachNewThread { [self] in pump(outFD, isStdout: true) }
        Thread.detachNewThread { [self] in pump(errFD, isStdout: false) }
    }

    private func pump(_ fd: Int32, isStdout: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var partial = Data()
        while true {
            let n = (try? retryingInterrupts { buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }.get()) ?? -1
            condition.lock()
            if n <= 0 {
                if isStdout { stdoutDone = true } else { stderrDone = true }
                condition.broadcast()
                condition.unlock()
                close(fd)
                return
            }
            if isStdout {
                partial.append(contentsOf: buffer[0..<n])
                while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                    partial.removeSubrange(partial.startIndex...newline)
                }
            } else {
                stderrText.append(contentsOf: buffer[0..<n])
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Lines printed so far.
    package var output: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    /// Waits until at least `count` lines have arrived, output ended, or `timeout` seconds pass.
    @discardableResult
    package func waitForLines(_ count: Int, timeout: Double = 60) -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while lines.count < count && !stdoutDone {
            if !condition.wait(until: deadline) { break }
        }
        return lines
    }

    /// Runs `program` to its end: how it ended, its output lines and its standard error.
    package static func run(_ program: String, _ arguments: [String]) throws -> (status: Termination, stdout: [String], stderr: String) {
        let child = try ChildProcess(program: program, arguments: arguments)
        let (end, stderr) = child.wait()
        return (end, child.output, stderr)
    }

    /// Sends `signal` to the child.
    package func kill(_ signal: Int32 = SIGKILL) {
        _ = Foundation.kill(processIdentifier, signal)
    }

    /// Waits (at most `timeout` seconds, then kills it) for the child to end and its output to close.
    package func wait(timeout: Double = 120) -> (termination: Termination, stderr: String) {
        if let exitStatus { return (exitStatus, stderr) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        var status: Int32 = 0
        while true {
            let r = waitpid(processIdentifier, &status, WNOHANG)
            if r == processIdentifier { break }
            if r < 0 && errno != EINTR { break }
            if Date() > deadline {
                kill(SIGKILL)
                _ = waitpid(processIdentifier, &status, 0)
                break
            }
            usleep(1_000)
        }
        let signal = status & 0x7f
        let termination: Termination = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        condition.lock()
        while !(stdoutDone && stderrDone) {
            if !condition.wait(until: Date(timeIntervalSinceNow: 10)) { break }
        }
        exitStatus = termination
        condition.unlock()
        return (termination, stderr)
    }

    private var stderr: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stderrText, as: UTF8.self)
    }

    /// The last `count` bytes the process wrote to standard error so far (what it said before it
    /// failed to come up).
    package func errorTail(_ count: Int = 600) -> String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stderrText.suffix(count), as: UTF8.self)
    }
}
