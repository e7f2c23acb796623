import Dispatch
import FoundationEssentials
import Glibc
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
        let probe = try? Subprocess(bwrap, ["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
                                            "--symlink", "usr/lib64", "/lib64", "--unshare-all", "--die-with-parent", "/usr/bin/true"])
        return probe?.wait() == .exited(0) ? bwrap : nil
    }()

    /// Runs `entry` for the file at `input`, `size` pixels, and hands `body` the path of the
    /// regular file it wrote (removed after `body` returns).
    package static func run<T>(_ entry: ThumbnailerEntry, input: String, size: Int, limits: Limits = Limits(),
                              _ body: (String) throws -> T) throws -> T {
        func fail(_ reason: Failure.Reason) -> Failure { Failure(plugin: entry.name, reason: reason) }
        guard let bwrap = bubblewrap else { throw fail(.noSandbox) }
        guard entry.isRunnable else { throw fail(.notInstalled) }
        let name = FilePaths.lastComponent(input)
        let ext = FilePaths.pathExtension(name)
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

        // Beside the private /tmp, not in it: what the plug-in says is read here, never written by it as a file.
        let errors = scratch + ".stderr"
        let errorFD = open(errors, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard errorFD >= 0 else { throw fail(.noScratch(errors)) }
        defer {
            close(errorFD)
            unlink(errors)
        }
        let process: Subprocess
        do {
            process = try Subprocess(bwrap, arguments, environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"],
                                     standardError: errorFD)
        } catch { throw fail(.didNotStart("\(error)")) }
        guard let ending = process.wait(timeout: limits.timeout) else {
            // The sandbox's own first process before bwrap: its PID namespace, and every process
            // in it, ends with it. (Killed alone, bwrap takes them along only once its child has
            // asked to die with it, which a start slowed by load may not have done yet.)
            for child in Self.children(of: process.pid) { kill(child, SIGKILL) }
            kill(process.pid, SIGKILL)
            _ = process.wait()
            throw fail(.timedOut(seconds: limits.timeout))
        }
        guard ending == .exited(0) else {
            let said = (try? String(contentsOfFile: errors, encoding: .utf8))?.split(separator: "\n").last.map(String.init) ?? ""
            switch ending {
            case .exited(let status): throw fail(.exited(status: status, said: said))
            case .killed(let signal): throw fail(.killed(signal: signal, said: said))
            }
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
