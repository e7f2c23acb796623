import ArgumentParser
import CThumbcacheProcess
import Dispatch
import FoundationEssentials
import ThumbcacheSync
import Glibc
import Thumbcache

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Keep the cache and the search index up to date as files change.",
        discussion: """
            Warms the paths once, then watches every directory under them with inotify: new and \
            changed files get their thumbnails and index entries, a file or directory moved \
            within the paths keeps its index entry and thumbnails (a move, not a delete and an \
            add), deleted ones are removed. Bursts are gathered (--quiet, at most --max-delay) \
            into one batch. If the kernel's event queue overflows, the paths are rescanned, so \
            nothing is missed. Nothing runs while nothing changes.

            inotify watches one directory at a time, up to fs.inotify.max_user_watches for all \
            of a user's programs; past that (or --max-watches) the rest are rescanned every \
            --rescan-interval seconds, and watch says so.

            It runs at idle CPU and I/O priority (nice 19, the idle I/O class), its workers too, \
            so reading the words inside changed files never slows what a user does; --priority \
            normal keeps the priority it was started with.

            Runs until interrupted (Ctrl-C or SIGTERM).

            Examples:
              thumbcache watch ~/Pictures ~/Documents
              thumbcache watch --freedesktop --json ~/Pictures
            """
    )

    @Argument(help: ArgumentHelp("Directories to watch.", valueName: "path"))
    var paths: [String]

    @OptionGroup var cacheOptions: CacheOptions

    @OptionGroup var decoderOptions: DecoderOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var remoteOptions: RemoteOptions

    @Option(name: .shortAndLong, help: "Parallel workers (the default is one per core and one more).")
    var jobs: Int = Warmer.defaultJobs

    @Flag(name: .long, help: "Also keep the freedesktop thumbnails ($XDG_CACHE_HOME/thumbnails, normal and large) up to date.")
    var freedesktop = false

    @Flag(name: .long, help: "Do not index file metadata for search (thumbnails only).")
    var noIndex = false

    @Option(name: .long, help: ArgumentHelp("Seconds without events that end a batch.", valueName: "seconds"))
    var quiet: Double = 0.15

    @Option(name: .long, help: ArgumentHelp("Seconds a batch waits at most after its first event.", valueName: "seconds"))
    var maxDelay: Double = 1

    @Option(name: .long, help: ArgumentHelp("Watch at most this many directories (leave watches for other programs).", valueName: "n"))
    var maxWatches: Int?

    @Option(name: .long, help: ArgumentHelp("Seconds between rescans of directories that could not be watched.", valueName: "seconds"))
    var rescanInterval: Double = 60

    @Option(name: .long, help: ArgumentHelp("Seconds without changes after which idle decoder workers exit (the next change starts them again).",
                                            valueName: "seconds"))
    var workerIdleExit: Double = 60

    @Flag(name: .long, help: "Print a JSON line per batch.")
    var json = false

    enum Priority: String, ExpressibleByArgument, CaseIterable { case idle, normal }

    @Option(name: .long, help: ArgumentHelp("idle (the default: nice 19 and the idle I/O class, workers too) or normal.", valueName: "priority"))
    var priority: Priority = .idle

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard quiet > 0, maxDelay >= quiet else { throw ValidationError("--quiet must be above 0 and at most --max-delay") }
        if let maxWatches, maxWatches < 1 { throw ValidationError("--max-watches must be at least 1") }
        guard rescanInterval >= 1 else { throw ValidationError("--rescan-interval must be at least 1 second") }
        guard workerIdleExit > 0 else { throw ValidationError("--worker-idle-exit must be more than 0 seconds") }
        for path in paths {
            guard FilePaths.isDirectory(path) else {
                throw ValidationError("not a directory: \(path)")
            }
        }
    }

    func run() async throws {
        if priority == .idle, case let failed = tc_process_be_idle(), failed != 0 {
            writeStandardError("thumbcache watch: note: could not lower the priority: \(String(cString: strerror(failed)))\n")
        }
        let remote = try remoteOptions.open()
        let store = try cacheOptions.open(durability: .deferred)
        let index = noIndex ? nil : try cacheOptions.openIndex(durability: .deferred)
        let (providers, types) = pluginOptions.providers(decoderOptions)
        var isolation = decoderOptions.isolation()
        isolation.workerIdleExit = workerIdleExit
        let warm = Warmer.Options(jobs: jobs, index: index, isolation: isolation,
                                  freedesktop: freedesktop ? FreedesktopExport() : nil, remote: remote)
        let updater = try LiveUpdater(roots: paths, store: store, providers: providers, types: types,
                                      options: .init(warm: warm, quiet: quiet, maxDelay: maxDelay, maxWatches: maxWatches,
                                                     rescanInterval: rescanInterval))
        // Signals end the loop after its batch, so the last commits are flushed.
        var sources: [any DispatchSourceSignal] = []
        for signal in [SIGINT, SIGTERM] {
            Glibc.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            source.setEventHandler { updater.stop() }
            source.resume()
            sources.append(source)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try await updater.run { batch in
            if let message = batch.message { writeStandardError("thumbcache watch: \(message)\n") }
            // Unbuffered: a reader on a pipe sees each batch as it ends.
            if json {
                writeStandardOutput(String(decoding: (try? encoder.encode(batch)) ?? Data(), as: UTF8.self) + "\n")
            } else {
                let w = batch.warm
                let time = LocalTime.clock(Date().timeIntervalSince1970)
                writeStandardOutput("\(time): \(batch.files) files, \(batch.directories) directories, \(batch.moved) moved, \(batch.removed) removed"
                    + (batch.rescanned ? ", rescanned" : "")
                    + " — \(w?.generated ?? 0) thumbnails made, \(w?.failed ?? 0) failed (\(fixed(batch.seconds, places: 2)) s)\n")
            }
            try? index?.sync()
        }
        sources.forEach { $0.cancel() }
        try index?.sync()
    }
}
