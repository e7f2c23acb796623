import ArgumentParser
import FoundationEssentials
import Glibc
import Thumbcache
import ThumbcacheSync
import ThumbcacheWorker

struct FreedesktopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "freedesktop",
        abstract: "Work with the desktop's thumbnailing: install thumbcache as a .thumbnailer plug-in.",
        discussion: """
            GNOME's thumbnail factory (Nautilus, the file chooser) and tumbler (Thunar) run a \
            .thumbnailer plug-in for the MIME types it declares. `install` declares thumbcache \
            for every type it makes thumbnails of; those programs then run thumbcache's \
            plug-in program (thumbcache-thumbnailer, beside the worker programs), which makes \
            the thumbnail itself where there is no cache and otherwise hands the call to \
            `thumbcache freedesktop thumbnail`, which answers from thumbcache's cache and \
            stores what it makes there. GNOME runs plug-ins in a bubblewrap sandbox that sees \
            /usr only: `install` refuses a program GNOME could not run (give --anyway for \
            Thunar alone); the Debian package (Tools/package) installs thumbcache under /usr, \
            where it makes thumbnails without its cache.

            To write the standard thumbnails of a whole tree ahead of time, use \
            `thumbcache warm --freedesktop`; to clean them, `thumbcache compact --freedesktop`.

            Examples:
              thumbcache freedesktop install          (for you)
              sudo thumbcache freedesktop install --system
              thumbcache freedesktop install --print  (show it)
            """,
        subcommands: [Install.self, Thumbnail.self]
    )

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Install thumbcache.thumbnailer for you or for everyone.")

        @Flag(name: .long, help: "Install for every user: /usr/local/share/thumbnailers (needs root).")
        var system = false

        @Option(name: .long, help: ArgumentHelp("Install into this thumbnailers directory instead.", valueName: "dir"))
        var directory: String?

        @Option(name: .long, help: ArgumentHelp("The thumbcache program (default: this one): the plug-in's program is looked for beside it, else the entry runs it.", valueName: "path"))
        var executable: String?

        @Option(name: .long, help: ArgumentHelp("The plug-in's program the entry runs (default: thumbcache-thumbnailer where the worker programs are, else `thumbcache freedesktop thumbnail`).", valueName: "path"))
        var thumbnailer: String?

        @Flag(name: .long, help: "Print the file instead of writing it.")
        var print = false

        @Flag(name: .long, help: "Install even where GNOME's sandbox cannot run the program (Thunar's tumbler runs plug-ins outside one).")
        var anyway = false

        func run() throws {
            let program = executable ?? Self.currentExecutable
            let plugIn = thumbnailer ?? Self.thumbnailerProgram(beside: program)
            let entry = ThumbnailerEntry.thumbcache(executable: program, thumbnailer: plugIn)
            if print {
                Swift.print(entry.text, terminator: "")
                return
            }
            if !anyway, let why = Self.hiddenFromGNOME(program) ?? plugIn.flatMap(Self.hiddenFromGNOME) {
                throw CommandFailure("""
                    not installed: GNOME runs a thumbnailer in a sandbox that sees /usr and little else, and \(why), \
                    so every thumbnail GNOME asked for would fail. Install the Debian package (Tools/package builds it), \
                    which puts thumbcache in /usr/bin and its plug-in in /usr/share/thumbnailers; or copy the programs and \
                    the libraries they need under /usr/local and give --executable; or --anyway for Thunar's tumbler, which \
                    runs plug-ins outside a sandbox.
                    """)
            }
            let folder = directory ?? (system ? "/usr/local/share/thumbnailers" : FilePaths.dataHome + "/thumbnailers")
            let path = folder + "/thumbcache.thumbnailer"
            try Self.install(entry.text, at: path)
            Swift.print("installed \(path): \(entry.mimeTypes.count) MIME types, running \(plugIn ?? program)")
        }

        /// `thumbcache-thumbnailer` where the worker programs of `program` are: beside it (a
        /// build's products), else in the `libexec/thumbcache` of its prefix (the package's).
        static func thumbnailerProgram(beside program: String) -> String? {
            ProgramPaths.companionDirectories(of: program).map { $0 + "/thumbcache-thumbnailer" }.first { access($0, X_OK) == 0 }
        }

        /// Writes `text` to `path` (its directory made if missing), atomically.
        static func install(_ text: String, at path: String) throws {
            do {
                try FileManager.default.createDirectory(atPath: FilePaths.parent(path), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw CommandFailure("cannot write \(path): \(reason(error))")
            }
        }

        /// This program's absolute path.
        static var currentExecutable: String { ProgramPaths.currentExecutable ?? CommandLine.arguments[0] }

        /// Why GNOME's thumbnailer sandbox (bubblewrap showing /usr, /lib and /bin, not /opt or
        /// home directories) could not run `program`, or nil if it can: where it is, and for this
        /// program, where its Swift runtime was loaded from (a toolchain's, unless linked in).
        static func hiddenFromGNOME(_ program: String) -> String? {
            let visible = ["/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/"]
            guard visible.contains(where: program.hasPrefix) else { return "\(program) is outside them" }
            guard program == currentExecutable, let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
            let runtime = maps.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).last }
                .map(String.init).first { $0.hasSuffix("/libswiftCore.so") }
            return runtime.flatMap { path in visible.contains(where: path.hasPrefix) ? nil : "it runs on \(path), outside them" }
        }
    }

    struct Thumbnail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What the plug-in runs: write one file's thumbnail as PNG (the .thumbnailer contract).",
            discussion: """
                Serves the thumbnail from thumbcache's cache, or makes it and stores it there; \
                where there is no cache (inside GNOME's sandbox, which hides it) it makes it \
                directly. \
                Exits 1 with the reason on standard error if no thumbnail can be made, so the \
                caller records a failure.
                """)

        @Option(name: .shortAndLong, help: "Largest side in pixels (%s).")
        var size: Int = 256

        @Argument(help: ArgumentHelp("The file, as a path or a file:// URI (%i or %u).", valueName: "input"))
        var input: String

        @Argument(help: ArgumentHelp("Where to write the PNG (%o).", valueName: "output"))
        var output: String

        @OptionGroup var cacheOptions: CacheOptions

        @OptionGroup var decoderOptions: DecoderOptions

        func validate() throws {
            guard (1...4096).contains(size) else { throw ValidationError("--size must be between 1 and 4096") }
        }

        func run() async throws {
            try await Self.write(input, to: output, size: size, cacheDirectory: cacheOptions.directory, fullHash: cacheOptions.fullHash,
                                 isolation: decoderOptions.isolation(workers: 1))
        }

        /// The call the `.thumbnailer` `install` writes, `freedesktop thumbnail --size N INPUT
        /// OUTPUT` and nothing else, read without ArgumentParser: GNOME and tumbler start a
        /// process per file, and ArgumentParser's reflection is the largest part of a cache
        /// hit's start (Docs/PERFORMANCE.md). Nil for any other arguments, which take the usual way.
        static func plugInCall(_ arguments: [String]) -> (input: String, output: String, size: Int)? {
            guard arguments.count == 7, arguments[1] == "freedesktop", arguments[2] == "thumbnail", arguments[3] == "--size",
                  let size = Int(arguments[4]), (1...4096).contains(size),
                  !arguments[5].hasPrefix("-"), !arguments[6].hasPrefix("-") else { return nil }
            return (arguments[5], arguments[6], size)
        }

        /// Writes `input`'s thumbnail to `output` as PNG: from the cache in `cacheDirectory` if it
        /// exists (and stored there), else made directly.
        static func write(_ input: String, to output: String, size: Int, cacheDirectory: String, fullHash: Bool,
                          isolation: DecoderIsolation) async throws {
            guard let miss = try writeBeforeAwait(input, to: output, size: size, cacheDirectory: cacheDirectory, fullHash: fullHash,
                                                  isolation: isolation) else { return }
            try await writeMade(input, to: output, size: size, after: miss)
        }

        /// What the call does synchronously, so that the plug-in's call runs it on the main thread
        /// before its first `await` (a worker it starts then waits for no thread of the pool):
        /// the thumbnail made directly where no cache exists (inside GNOME's sandbox, always; a
        /// new cache there would land in its private /tmp and be thrown away) or it does not
        /// open, else the stored one; nil when written. On a miss, the open store and the file's
        /// decoding, its worker started, which ``writeMade(_:to:size:after:)`` needs.
        static func writeBeforeAwait(_ input: String, to output: String, size: Int, cacheDirectory: String, fullHash: Bool,
                                     isolation: DecoderIsolation) throws -> (store: ThumbnailStore, prepared: OneFile.Prepared)? {
            do {
                guard ThumbnailStore.exists(directory: cacheDirectory),
                      let store = try? ThumbnailStore.open(directory: cacheDirectory, options: .init(keying: fullHash ? .full : .standard))
                else {
                    try writeDirectly(resolved(input), to: output, size: size, isolation: isolation)
                    return nil
                }
                let file = resolved(input)
                let stored = try OneFile.stored(request(file, size: size), in: store) { try OutputFile.write($0.pngData(), to: output) }
                return stored ? nil : (store, OneFile.prepared(forFileAt: file, isolation: isolation))
            } catch {
                throw CommandFailure("\(error)")
            }
        }

        /// After a miss, makes `input`'s thumbnail, stores it in `store` and writes it to `output`.
        static func writeMade(_ input: String, to output: String, size: Int,
                              after miss: (store: ThumbnailStore, prepared: OneFile.Prepared)) async throws {
            do {
                try await OneFile.representation(request(resolved(input), size: size), store: miss.store, prepared: miss.prepared,
                                                 standardThumbnails: nil) { _ in
                    [ImageThumbnailProvider()]
                } deliver: { try OutputFile.write($0.pngData(), to: output) }
            } catch {
                throw CommandFailure("\(error)")
            }
        }

        private static func request(_ file: String, size: Int) -> ThumbnailRequest {
            ThumbnailRequest(fileAt: file, size: Double(size), representationTypes: .thumbnail)
        }

        private static func resolved(_ input: String) -> String {
            FilePaths.resolved(input.hasPrefix("file://") ? (FileURI.path(of: input) ?? input) : input)
        }

        private static func writeDirectly(_ file: String, to output: String, size: Int, isolation: DecoderIsolation) throws {
            let decoding = OneFile.prepared(forFileAt: file, isolation: isolation).decoding
            defer { decoding.hangUpIdleWorkers() }
            let image = try DirectThumbnail.make(file, options: ThumbnailOptions(maxWidth: size, maxHeight: size), decoding: decoding)
            try OutputFile.write(ImageEncoder.png(image), to: output)
        }
    }
}

/// A thumbnail made straight from the file, no cache: what `thumbnail` does, and the plug-in
/// where the cache is out of reach.
enum DirectThumbnail {
    static func make(_ file: String, options: ThumbnailOptions, decoding: any ImageDecoding,
                     types: @autoclosure () -> ContentTypeRegistry = ContentTypeRegistry()) throws -> RGBAImage {
        try decoding.thumbnail(ofFileAt: file, options: options, format: readAs(file, types: types())).0
    }

    /// The format to read the file as: the one its bytes name, passed on so that the decoding
    /// side (the pool choosing a worker, an in-process decode) does not read them again; else,
    /// since text has no signature, text where the file's type (name and bytes) says so; else nil.
    static func readAs(_ file: String, types: @autoclosure () -> ContentTypeRegistry) -> ImageFormat? {
        // Bytes that name a format settle it without the types, whose first use reads
        // shared-mime-info's database: most of a plug-in call's time for a small file.
        if let named = ImageDecoders.catalogue.format(ofFileAt: file) { return named }
        let types = types()
        return types.conforms(types.type(ofFileAt: file), to: .text) ? .text : nil
    }
}
