import Foundation
import ThumbcacheStore
import ThumbcacheSync

/// Runs a `.thumbnailer` plug-in's command in bubblewrap, as GNOME runs them: `/usr` read-only,
/// the input file bound read-only, a private `/tmp` (a fresh host directory) for the output,
/// every namespace unshared (no network, no other process), a new session, address-space,
/// CPU-time and file-size limits, and killed at its time limit.
package enum PluginSandbox {
    /// Why a plug-in produced no thumbnail.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package enum Reason: Sendable, Hashable, CustomStringConvertible {
            /// bubblewrap is missing or cannot make a sandbox here.
            case noSandbox
            /// Its program is not installed (TryExec).
            case notInstalled
            case unparsableExec(String)
            /// A private directory or file for it could not be made (the path).
            case noScratch(String)
            case didNotStart(String)
            case timedOut(seconds: Double)
            case exited(status: Int32, said: String)
            case killed(signal: Int32, said: String)
            case noOutput
            case outputSize(Int64)
            /// What it wrote is not an image thumbcache reads.
            case unreadableOutput(String)
            /// No plug-in declares the type.
            case noPlugin(ContentType)

            package var description: String {
                switch self {
                case .noSandbox: "bubblewrap (bwrap) is missing or cannot make a sandbox here; plug-ins run only inside one"
                case .notInstalled: "its program is not installed (TryExec)"
                case .unparsableExec(let exec): "its Exec line does not parse: \(exec)"
                case .noScratch(let path): "cannot create \(path) for it"
                case .didNotStart(let why): "bwrap did not start: \(why)"
                case .timedOut(let seconds): "took longer than \(seconds) s and was stopped"
                case .exited(let status, let said): "exited with status \(status)" + (said.isEmpty ? "" : ": " + said)
                case .killed(let signal, let said): "was killed by signal \(signal)" + (said.isEmpty ? "" : ": " + said)
                case .noOutput: "exited without writing a thumbnail"
                case .outputSize(let bytes): "wrote \(bytes) bytes, not a thumbnail"
                case .unreadableOutput(let why): "its output is not an image thumbcache reads: \(why)"
                case .noPlugin(let type): "no plug-in for \(type.identifier)"
                }
            }
        }

        package var plugin: String
        package var reason: Reason
        package var description: String { "thumbnailer plug-in \(plugin): \(reason)" }

        /// True when the file's bytes are to blame (the plug-in failed on them), false when this
        /// machine is (no sandbox, the program missing): only the first is remembered against the bytes.
        package var isContentFault: Bool {
            switch reason {
            case .noSandbox, .notInstalled, .unparsableExec, .noScratch, .didNotStart, .noPlugin: false
            case .timedOut, .exited, .killed, .noOutput, .outputSize, .unreadableOutput: true
            }
        }
    }

    /// The limits a plug-in runs under (the worker's, by default).
    package struct Limits: Sendable, Hashable {
        package var timeout: Double
        package var memoryLimit: Int
        /// Largest output accepted.
        package var maxOutputBytes: Int

        package init(timeout: Double = 20, memoryLimit: Int = 1 << 30, maxOutputBytes: Int = 32 << 20) {
            self.timeout = timeout
            self.memoryLimit = memoryLimit
            self.maxOutputBytes = maxOutputBytes
        }
    }

    /// bubblewrap's path, if it is installed and can make a sandbox here (checked once per process).
    package static let bubblewrap: String? = {
        guard let bwrap = ProgramPaths.resolve("bwrap") else { return nil }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: bwrap)
        probe.arguments = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
                           "--symlink", "usr/lib64", "/lib64", "--unshare-all", "--die-with-parent", "/usr/bin/true"]
        probe.standardError = FileHandle.nullDevice
        probe.standardOutput = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return nil }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? bwrap : nil
    }()

    /// Runs `entry` for the file at `input`, `size` pixels, and hands `body` the path of the
    /// regular file it wrote (removed after `body` returns).
    package static func run<T>(_ entry: ThumbnailerEntry, input: String, size: Int, limits: Limits = Limits(),
                              _ body: (String) throws -> T) throws -> T {
        func fail(_ reason: Failure.Reason) -> Failure { Failure(plugin: entry.name, reason: reason) }
        guard let bwrap = bubblewrap else { throw fail(.noSandbox) }
        guard entry.isRunnable else { throw fail(.notInstalled) }
        let name = (input as NSString).lastPathComponent
        let ext = (name as NSString).pathExtension
        let inside = "/tmp/thumbcache-input" + (ext.isEmpty ? "" : "." + ext)
        let output = "/tmp/thumbcache-output.png"
        guard var command = entry.command(uri: FileURI.of(path: inside), input: inside, output: output, size: size),
            let program = ProgramPaths.resolve(command[0])
        else { throw fail(.unparsableExec(entry.exec)) }
        command[0] = program

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("thumbcache-plugin-\(UUID().uuidString)").path
        guard (try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])) != nil
        else { throw fail(.noScratch(scratch)) }
        defer { try? FileManager.default.removeItem(atPath: scratch) }

        var arguments = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
                         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                         "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
                         "--ro-bind-try", "/etc/fonts", "/etc/fonts", "--ro-bind-try", "/var/cache/fontconfig", "/var/cache/fontconfig",
                         "--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp",
                         "--unshare-all", "--die-with-parent", "--new-session",
                         "--bind", scratch, "/tmp", "--ro-bind", input, inside]
        // A plug-in installed outside /usr (in /opt, say) is visible at its own path, read-only.
        if !program.hasPrefix("/usr/") { arguments += ["--ro-bind", program, program] }
        let cpuSeconds = max(1, Int(limits.timeout.rounded(.up)))
        arguments += ["--", "/usr/bin/prlimit", "--as=\(limits.memoryLimit)", "--cpu=\(cpuSeconds)", "--fsize=\(limits.maxOutputBytes)", "--core=0", "--"]
            + command

        let process = Process()
        process.executableURL = URL(fileURLWithPath: bwrap)
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"]
        // Beside the private /tmp, not in it: what the plug-in says is read here, never written by it as a file.
        let errors = scratch + ".stderr"
        guard FileManager.default.createFile(atPath: errors, contents: nil), let errorHandle = FileHandle(forWritingAtPath: errors) else {
            throw fail(.noScratch(errors))
        }
        defer {
            try? errorHandle.close()
            unlink(errors)
        }
        process.standardError = errorHandle
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        do { try process.run() } catch { throw fail(.didNotStart("\(error)")) }
        if ended.wait(timeout: .now() + limits.timeout) == .timedOut {
            // The sandbox's own first process before bwrap: its PID namespace, and every process
            // in it, ends with it. (Killed alone, bwrap takes them along only once its child has
            // asked to die with it, which a start slowed by load may not have done yet.)
            for child in Self.children(of: process.processIdentifier) { kill(child, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
            throw fail(.timedOut(seconds: limits.timeout))
        }
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let said = (try? String(contentsOfFile: errors, encoding: .utf8))?.split(separator: "\n").last.map(String.init) ?? ""
            throw fail(process.terminationReason == .exit ? .exited(status: process.terminationStatus, said: said)
                                                          : .killed(signal: process.terminationStatus, said: said))
        }
        let written = scratch + "/thumbcache-output.png"
        var s = stat()
        guard lstat(written, &s) == 0, s.st_mode & S_IFMT == S_IFREG else { throw fail(.noOutput) }
        guard s.st_size > 0, Int(s.st_size) <= limits.maxOutputBytes else { throw fail(.outputSize(Int64(s.st_size))) }
        return try body(written)
    }

    /// The processes `pid` started that are still its children (`/proc/PID/task/*/children`).
    static func children(of pid: Int32) -> [Int32] {
        let tasks = "/proc/\(pid)/task"
        return ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).flatMap { task in
            ((try? String(contentsOfFile: "\(tasks)/\(task)/children", encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int32($0) }
        }
    }
}
