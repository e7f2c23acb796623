import ArgumentParser
import ThumbcacheSync
import Thumbcache
import ThumbcacheDaemon

struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Serve thumbnails on the session bus, as tumblerd does (org.freedesktop.thumbnails).",
        discussion: """
            Thunar, Ristretto and other applications ask for thumbnails over D-Bus through \
            org.freedesktop.thumbnails.Thumbnailer1: Queue(uris, mime_types, flavor, scheduler, \
            handle_to_dequeue) answers with a handle, then the signals Started, Ready (the URIs \
            whose thumbnail is now in $XDG_CACHE_HOME/thumbnails), Error (URIs, a code, a reason) \
            and Finished. Flavors: normal, large, x-large, xx-large. Schedulers: default (in \
            arrival order), foreground (newest request first, for a scrolling window) and \
            background (when nothing else waits). A URI whose standard thumbnail is valid is \
            answered at once; others come from thumbcache's cache, or are made (in sandboxed \
            workers) and stored there too. org.freedesktop.thumbnails.Cache1 (Move, Copy, \
            Delete, Cleanup) keeps the standard thumbnails, the stat cache and the search index \
            in step with what a file manager did.

            `thumbcache daemon install` lets D-Bus start it on the first request (and systemd \
            manage it); started so, it exits after --idle-exit seconds with nothing to do.

            Examples:
              thumbcache daemon                  (serve on the session bus)
              thumbcache daemon --replace        (take over from a running tumblerd)
              thumbcache daemon install
            """,
        subcommands: [Serve.self, Install.self],
        defaultSubcommand: Serve.self
    )

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve on the bus (the default).")

        @Option(name: .long, help: ArgumentHelp("The bus address (default: the session bus).", valueName: "address"))
        var bus: String?

        @Option(name: .long, help: ArgumentHelp("Exit after this many seconds with nothing to do (default: never).", valueName: "seconds"))
        var idleExit: Double?

        @Flag(name: .long, help: "Take the bus names from a running thumbnailer such as tumblerd.")
        var replace = false

        @Option(name: .shortAndLong, help: "Files made at once (the default is one per core and one more).")
        var jobs: Int = Warmer.defaultJobs

        @Option(name: .long, help: ArgumentHelp("The standard thumbnail cache (default: $XDG_CACHE_HOME/thumbnails).", valueName: "dir"))
        var freedesktopDir: String?

        @Flag(name: .long, help: "Leave the search index alone (Cache1 then moves only thumbnails and the stat cache).")
        var noIndex = false

        @Option(name: .long, parsing: .singleValue, help: ArgumentHelp(
            "Also keep this directory's cache, index and standard thumbnails up to date live, as `thumbcache watch` does (repeatable).",
            valueName: "dir"))
        var watch: [String] = []

        @OptionGroup var cacheOptions: CacheOptions

        @OptionGroup var decoderOptions: DecoderOptions

        @OptionGroup var pluginOptions: PluginOptions

        @OptionGroup var remoteOptions: RemoteOptions

        func validate() throws {
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
            if idleExit != nil && !watch.isEmpty { throw ValidationError("--idle-exit and --watch do not go together: a watching daemon is never idle") }
            if let idleExit, idleExit <= 0 { throw ValidationError("--idle-exit takes a number of seconds above 0") }
        }

        func run() throws {
            let (providers, types) = pluginOptions.providers(decoderOptions)
            let cache = FreedesktopThumbnailCache(directory: freedesktopDir ?? FreedesktopThumbnailCache.defaultDirectory)
            let remote = try remoteOptions.open()
            let store = try cacheOptions.open()
            let index = noIndex ? nil : try? cacheOptions.openIndex()
            let updater = try watchDirectories(store: store, index: index, cache: cache, providers: providers, types: types, remote: remote)
            defer { updater?.stop() }
            do {
                try BusService.run(.init(address: bus, idleExit: watch.isEmpty ? idleExit : nil, replace: replace), store: store,
                                   index: index, cache: cache, providers: providers, types: types,
                                   isolation: decoderOptions.isolation(workers: jobs), workers: jobs, remote: remote) { line in
                    writeStandardError("thumbcache daemon: \(line)\n")
                }
            } catch {
                throw CommandFailure("\(error)")
            }
        }

        /// Starts watching `--watch`'s directories on a task of their own, if any.
        private func watchDirectories(store: ThumbnailStore, index: MetadataIndex?, cache: FreedesktopThumbnailCache,
                                      providers: [any ThumbnailProvider], types: ContentTypeRegistry, remote: RemoteCache?) throws -> LiveUpdater? {
            guard !watch.isEmpty else { return nil }
            // The watch's decoding (thumbnails and the words inside files) in workers of its own at
            // idle priority, so it never slows the thumbnails a file manager asks for.
            var isolation = decoderOptions.isolation(workers: 1)
            isolation.idlePriority = true
            let updater = try LiveUpdater(
                roots: watch, store: store, providers: providers, types: types,
                options: .init(warm: .init(jobs: 1, index: index, isolation: isolation,
                                           freedesktop: FreedesktopExport(cache: cache), remote: remote)))
            Task.detached {
                try? await updater.run { batch in
                    let line = "watch: \(batch.files) files, \(batch.directories) directories, \(batch.moved) moved, \(batch.removed) removed, "
                        + (batch.rescanned ? "rescanned, " : "") + "\(batch.warm?.generated ?? 0) thumbnails made"
                        + (batch.warm?.couldNotWrite == true ? ", writes failed" : "") + (batch.message.map { "; " + $0 } ?? "")
                    writeStandardError("thumbcache daemon: \(line)\n")
                }
            }
            return updater
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let D-Bus start the daemon on demand: service files and a systemd user unit.")

        @Option(name: .long, help: ArgumentHelp("Seconds the activated daemon stays with nothing to do.", valueName: "seconds"))
        var idleExit: Int = 300

        @Option(name: .long, help: ArgumentHelp("Where D-Bus looks for session services (default: $XDG_DATA_HOME/dbus-1/services).", valueName: "dir"))
        var servicesDir: String?

        @Option(name: .long, help: ArgumentHelp("Where systemd looks for user units (default: $XDG_CONFIG_HOME/systemd/user).", valueName: "dir"))
        var systemdDir: String?

        @Option(name: .long, help: ArgumentHelp("The thumbcache program D-Bus starts (default: this one; a package gives /usr/bin/thumbcache).",
                                                valueName: "path"))
        var executable: String?

        @Flag(name: .long, help: "Print the files instead of writing them.")
        var print = false

        func validate() throws {
            guard idleExit >= 1 else { throw ValidationError("--idle-exit takes a number of seconds, at least 1") }
            if let executable, !executable.hasPrefix("/") { throw ValidationError("--executable takes an absolute path, not \(executable)") }
        }

        func run() throws {
            let program = executable ?? FreedesktopCommand.Install.currentExecutable
            let unit = "thumbcache-daemon.service"
            let services = servicesDir ?? FilePaths.dataHome + "/dbus-1/services"
            let config = FilePaths.environment("XDG_CONFIG_HOME") ?? (FilePaths.home + "/.config")
            var files: [(String, String)] = []
            for name in ["org.freedesktop.thumbnails.Thumbnailer1", "org.freedesktop.thumbnails.Cache1"] {
                files.append((services + "/\(name).service", """
                    [D-BUS Service]
                    Name=\(name)
                    Exec=\(program) daemon --idle-exit \(idleExit)
                    SystemdService=\(unit)

                    """))
            }
            files.append(((systemdDir ?? config + "/systemd/user") + "/\(unit)", """
                [Unit]
                Description=thumbcache thumbnail service (org.freedesktop.thumbnails)

                [Service]
                Type=dbus
                BusName=org.freedesktop.thumbnails.Thumbnailer1
                ExecStart=\(program) daemon --idle-exit \(idleExit)

                """))
            for (path, text) in files {
                if print {
                    Swift.print("# \(path)\n\(text)")
                    continue
                }
                try FreedesktopCommand.Install.install(text, at: path)
                Swift.print("installed \(path)")
            }
        }
    }
}
