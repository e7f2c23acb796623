import ArgumentParser
import Thumbcache
import ThumbcacheSync
import ThumbcacheWorker
#if canImport(Glibc)
import Glibc
#endif

@main
struct ThumbcacheCommand: AsyncParsableCommand {
    static func main() async {
        EarlyStart.becomeWorkerIfForked()
        // Answered before anything is set up, as get's quick call is: ArgumentParser's reflection
        // and `print`'s casts were a third of the time `--version` took (PERFORMANCE.md).
        if CommandLine.arguments.count == 2, CommandLine.arguments[1] == "--version" {
            _ = (thumbcacheVersion + "\n").utf8.withContiguousStorageIfAvailable { writeFully(1, UnsafeRawBufferPointer($0)) }
            return
        }
        if let command = CommandLine.arguments.dropFirst().first, ["serve", "daemon", "watch"].contains(command) {
            keepServiceMemoryFlat()
        } else {
            keepDecoderBuffersInHeap()
        }
        do {
            if let call = FreedesktopCommand.Thumbnail.plugInCall(CommandLine.arguments) {
                // The defaults of every option the call leaves out, as ArgumentParser would give them.
                let (cache, isolation) = (ThumbnailStore.defaultDirectory, DecoderOptions.oneFile)
                // Before any `await`: without a cache (GNOME's sandbox), or a hit, the call is done here.
                guard let miss = try FreedesktopCommand.Thumbnail.writeBeforeAwait(call.input, to: call.output, size: call.size,
                                                                                   cacheDirectory: cache, fullHash: false,
                                                                                   isolation: isolation) else { Glibc.exit(0) }
                try await exitingWhereItEnds {
                    try await FreedesktopCommand.Thumbnail.writeMade(call.input, to: call.output, size: call.size, after: miss)
                    return true
                }
                return
            }
            let quickCall = GetCommand.quickCall(CommandLine.arguments)
            EarlyStart.keepOrEnd(for: quickCall)
            if let call = quickCall {
                // A hit is answered here, on the main thread, before any `await`.
                let store = try GetCommand.store(call)
                if try GetCommand.answerFromCache(call, store: store) { WorkerFork.discardEarly(); Glibc.exit(0) }
                switch try GetCommand.miss(call, store: store) {
                case .answered: WorkerFork.discardEarly(); Glibc.exit(0)
                case .decoding(let prepared):
                    try await exitingWhereItEnds {
                        try await GetCommand.run(call, store: store, prepared: prepared)
                        return true
                    }
                case .usualWay: WorkerFork.discardEarly()
                }
            }
            if let message = unknownCommand(CommandLine.arguments) {
                _ = (message + "\n").utf8.withContiguousStorageIfAvailable { writeFully(2, UnsafeRawBufferPointer($0)) }
                Glibc.exit(ExitCode.validationFailure.rawValue)
            }
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await exitingWhereItEnds {
                    try await asyncCommand.run()
                    return true
                }
            } else {
                try command.run()
            }
        } catch {
            exitWriting(error)
        }
    }

    /// Runs `call` and, when it is done (true), exits from the thread it ended on. Returning to
    /// `main` would first start a thread for the main actor (async `main` gives the main thread
    /// to dispatch): 0.5-1 ms of a process made for one file, or of `info` called once per file.
    nonisolated static func exitingWhereItEnds(_ call: sending () async throws -> Bool) async throws {
        if try await call() { Glibc.exit(0) }
    }

    /// What to say when the first argument names no command (ArgumentParser would only call it
    /// an unexpected argument): the nearest command's name, if a typo away.
    static func unknownCommand(_ arguments: [String]) -> String? {
        guard arguments.count > 1 else { return nil }
        let name = arguments[1]
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !name.hasPrefix("-"), !names.contains(name) else { return nil }
        let nearest = names.map { (name: $0, distance: editDistance(name, $0)) }.min { $0.distance < $1.distance }
        let suggestion = nearest.flatMap { $0.distance <= 2 ? " Did you mean '\($0.name)'?" : nil } ?? ""
        return "Error: '\(name)' is not a thumbcache command.\(suggestion)\n  See 'thumbcache --help' for the commands."
    }

    /// The number of one-character insertions, deletions and substitutions between `a` and `b`.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = a[i - 1] == b[j - 1] ? diagonal : 1 + min(diagonal, above, row[j - 1])
                diagonal = above
            }
        }
        return row[b.count]
    }

    /// ArgumentParser's `exit(withError:)`, the message written in one call: its own stream wrote
    /// stderr one byte per system call.
    static func exitWriting(_ error: any Error) -> Never {
        let message = fullMessage(for: error)
        let code = exitCode(for: error)
        if !message.isEmpty {
            let bytes = Array((message + "\n").utf8)
            let stream: Int32 = code == .success ? 1 : 2
            bytes.withUnsafeBytes { _ = writeFully(stream, $0) }
        }
        Glibc.exit(code.rawValue)
    }

    static let configuration = CommandConfiguration(
        commandName: "thumbcache",
        abstract: "Make, cache and serve thumbnails; index and search file metadata.",
        discussion: """
            The cache is an embedded LMDB database: nothing to start. It lives in \
            $THUMBCACHE_DIR, else $XDG_CACHE_HOME/thumbcache, else ~/.cache/thumbcache; \
            --cache overrides all of them.

            Examples:
              thumbcache warm ~/Pictures           precompute everything under ~/Pictures
              thumbcache get a.jpg -o a.png        one thumbnail, cached
              thumbcache search holiday            files whose name, tags or text say so
              thumbcache info a.jpg                every indexed attribute of a file
              thumbcache stats --json              what the cache holds, as JSON
              thumbcache thumbnail a.jpg -o a.png  one thumbnail, no cache
              thumbcache warm --freedesktop ~/Pictures   for file managers too
              thumbcache freedesktop install       let GNOME and Thunar use thumbcache
              thumbcache daemon                    serve thumbnails on D-Bus, as tumblerd
              thumbcache watch ~/Pictures          keep the cache and index up to date
              thumbcache serve ~/Pictures          browse, search and tag in a browser
            """,
        version: thumbcacheVersion,
        subcommands: [WarmCommand.self, GetCommand.self, SearchCommand.self, InfoCommand.self, TextCommand.self, StatsCommand.self, CompactCommand.self, CheckCommand.self, ThumbnailCommand.self,
                      FreedesktopCommand.self, DaemonCommand.self, WatchCommand.self, ServeCommand.self]
    )
}

