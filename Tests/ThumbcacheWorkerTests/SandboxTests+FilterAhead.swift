import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import ThumbcacheWorker

/// A worker started for a file whose library it loads before its confinement (`--expect`)
/// compiles its system-call filter on a second thread meanwhile (`csandbox_prepare`), then loads
/// that program: it must refuse all that the filter compiled in line refuses.
extension SandboxTests {
    /// The test worker, run under `strace` (which a test run has: ForkedDocumentsWorkerTests),
    /// logging the filter's making and loading to `log`.
    static func tracedTestWorker(in dir: TemporaryDirectory, log: String) throws -> String {
        let text = try dir.write("traced-worker.sh", Array("""
            #!/bin/sh
            exec strace -f -qq -e trace=memfd_create,seccomp -o '\(log)' '\(ChildProcess.productsDirectory)/thumbcache-test-worker' "$@"
            """.utf8))
        let script = dir.appending("traced-worker")
        try FixtureTools.run("/usr/bin/install", ["-m", "755", text, script])
        return script
    }

    @Test(arguments: ["create", "connect", "exec", "signal"])
    func aFilterCompiledWhileALibraryLoadsRefusesTheSame(action: String) throws {
        let dir = TemporaryDirectory()
        let listener = try LoopbackListener()
        let (created, executed) = (dir.appending("created-by-a-worker"), dir.appending("touched-by-a-shell"))
        let argument = ["create": created, "connect": String(listener.port), "exec": executed, "signal": String(getpid())][action]!
        let file = try dir.write("\(action).png", Self.hostile(action, argument))
        let log = dir.appending("strace.log")
        let pool = WorkerPool(.init(executable: try Self.tracedTestWorker(in: dir, log: log), workers: 1))
        defer { pool.close() }
        // Started for a TIFF (libtiff, loaded with dlopen): `--expect tiff`, so the filter is compiled ahead.
        pool.prepare(forFileAt: file, format: .tiff)
        Self.watchForSignal()
        // The decoder's own error (what it tried was refused), or the worker's (it was killed for trying).
        let error = #expect(throws: (any Error).self) {
            try pool.thumbnail(ofFileAt: file, options: ThumbnailOptions(maxWidth: 16, maxHeight: 16), format: nil)
        }
        let message = error.map { "\($0)" } ?? ""
        switch action {
        case "create": #expect(message.hasSuffix("creating \(created): Permission denied"), "\(message)")
        case "connect": #expect(message.hasSuffix("opening a socket: Permission denied"), "\(message)")
        default: #expect(message == "\(file): decoder tried a forbidden system call and was stopped (SIGSYS)", "\(message)")
        }
        #expect(pool.workersStarted == 1, "the worker started for the TIFF served the file")
        #expect(!FileManager.default.fileExists(atPath: created) && !FileManager.default.fileExists(atPath: executed))
        #expect(!listener.wasReached)
        #expect(Self.signalled.load(ordering: .relaxed) == 0, "a worker signalled the test process")
        // The program was made on the second thread and loaded whole, not compiled again.
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains("memfd_create(\"thumbcache-seccomp\"") }, "\(lines)")
        #expect(lines.contains { $0.contains("SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, {len=") }, "\(lines)")
    }
}
