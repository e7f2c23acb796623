import Foundation

/// A program run under `strace -f`, for tests that show what its processes did: which forked,
/// in what order, what each opened or mapped.
package enum SystemCallTrace {
    /// Runs `program` with `arguments` (and `environment`, `NAME=value` each, added to the test's),
    /// tracing `calls` (`strace -e trace=…`, descriptors shown with their paths): the log's lines,
    /// each `PID call…`, and the program's own pid.
    package static func run(_ program: String, _ arguments: [String], calls: String, environment: [String] = [],
                            in dir: TemporaryDirectory) throws -> (lines: [String], parent: String) {
        let log = dir.appending("strace-\(UUID().uuidString).log")
        _ = try FixtureTools.run("env", environment + ["strace", "-f", "-q", "-y", "-e", "trace=" + calls, "-o", log, program] + arguments)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        guard let parent = lines.first?.split(separator: " ").first.map(String.init) else {
            throw FixtureTools.ToolFailure(description: "strace wrote nothing for \(program)")
        }
        return (lines, parent)
    }

    /// The processes (not threads) `parent` forked, in order: `PID clone(…SIGCHLD…) = CHILD`, with
    /// the line each fork is on (`clone` needs to be among the calls traced).
    package static func forks(in lines: [String], by parent: String) -> [(line: Int, child: String)] {
        lines.indices.filter {
            lines[$0].hasPrefix(parent + " ") && lines[$0].dropFirst(parent.count).trimmingCharacters(in: .whitespaces).hasPrefix("clone(")
                && lines[$0].contains("SIGCHLD") && !lines[$0].contains("CLONE_THREAD")
        }
        .compactMap { i in lines[i].split(separator: "= ").last.map { (i, String($0).trimmingCharacters(in: .whitespaces)) } }
    }
}
