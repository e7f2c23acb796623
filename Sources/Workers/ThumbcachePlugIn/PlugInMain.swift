import CThumbcacheEarlyStart
import ThumbcacheCodecs
import ThumbcacheDocumentCodecs
import ThumbcacheImaging
import ThumbcacheSandbox
import ThumbcacheSync
import ThumbcacheWorker
#if canImport(Glibc)
import Glibc
#endif

/// What thumbcache's .thumbnailer plug-in runs, once per file (GNOME's thumbnail factory,
/// tumbler): `thumbcache-thumbnailer --size N INPUT OUTPUT`. Without a cache (always inside
/// GNOME's sandbox, which hides it) it makes the thumbnail as `thumbcache freedesktop thumbnail`
/// would, in a program that links neither Foundation nor the store, and forks its image or
/// documents worker instead of starting a program: a process per file pays for every start
/// (Docs/PERFORMANCE.md).
/// With a cache, or for a file whose bytes name no format (text), it hands the call to
/// `thumbcache`, which has both. The image worker's program is this program too (the package
/// installs one file under both names): `isCall` tells a plug-in's call from a worker's start.
package enum PlugInMain {
    /// Whether `arguments` are a plug-in's call (or its help), not a worker's start, which the
    /// pool makes with `--memory` first.
    package static func isCall(_ arguments: [String]) -> Bool {
        // Run by its plug-in name without arguments, as a person might: its usage, not a worker's start.
        if arguments.count == 1, arguments.first.map(FilePaths.lastComponent) == "thumbcache-thumbnailer" { return true }
        return arguments.count >= 2 && ["--size", "-s", "--print-confinement", "--help", "-h"].contains(arguments[1])
    }

    /// Answers the call and exits: 0 with the PNG written, 1 with the reason, 2 for arguments it
    /// does not take.
    package static func run(_ arguments: [String]) -> Never {
        EarlyStart.becomeWorkerIfForked()
        EarlyStart.keep()
        if (2...3).contains(arguments.count), arguments[1] == "--print-confinement" {
            guard let family = arguments.count == 2 ? .images : WorkerFamily(rawValue: arguments[2]) else {
                exit(2, saying: "Error: no worker family \(arguments[2]) (\(WorkerFamily.allCases.map(\.rawValue).joined(separator: ", ")))\n")
            }
            do {
                let (layers, forked) = try decoding().confinement(of: family)
                exit(0, saying: "\(forked ? "forked" : "spawned") \(family.rawValue) worker\n" + layers.map { $0 + "\n" }.joined())
            } catch {
                exit(1, saying: "Error: \(error)\n")
            }
        }
        if arguments.count == 2, ["--help", "-h"].contains(arguments[1]) { exit(0, saying: usage) }
        guard arguments.count == 5, ["--size", "-s"].contains(arguments[1]), let size = Int(arguments[2]), (1...4096).contains(size) else {
            exit(2, saying: "Error: expected --size N (1 to 4096), then the input and the output\n" + usage)
        }
        let (input, output) = (arguments[3], arguments[4])
        // A URI, a cache to serve from and store in, or a file only the content types can name
        // (text has no signature; an unreadable file gets thumbcache's own error): thumbcache's call.
        let file = FilePaths.resolved(input)
        guard !input.hasPrefix("file://"), !CacheLocation.holdsCache(CacheLocation.standard),
              let format = ImageDecoders.catalogue.format(ofFileAt: file) else {
            WorkerFork.discardEarly()
            handOn(size: arguments[2], input: input, output: output)
        }
        let pool = decoding()
        do {
            let (image, _) = try pool.thumbnail(ofFileAt: file, options: ThumbnailOptions(maxWidth: size, maxHeight: size), format: format)
            if let errno = writeFile(try ImageEncoder.png(image), to: output) { exit(1, saying: "Error: cannot write \(output): \(errno)\n") }
        } catch {
            exit(1, saying: "Error: \(error)\n")
        }
        pool.hangUpIdleWorkers()
        Glibc.exit(0)
    }

    static let usage = """
        Usage: thumbcache-thumbnailer --size N INPUT OUTPUT
               thumbcache-thumbnailer --print-confinement [FAMILY]

        What thumbcache's .thumbnailer plug-in runs (`thumbcache freedesktop install` writes it):
        writes the thumbnail of the file at path INPUT, at most N pixels on its longer side, to
        OUTPUT as PNG; exits 1 with the file and the reason where none can be made. A confined
        worker decodes the file. Where thumbcache's cache exists, `thumbcache freedesktop thumbnail`
        answers instead, from the cache.

        --print-confinement  how a worker of FAMILY (images, the default, vector, heavy,
                             documents or media) is confined on this system, and whether it
                             is forked from this program or started; a layer a line

        """

    /// Writes `text` to standard error (or output, for 0) in one call and exits with `code`.
    static func exit(_ code: Int32, saying text: String) -> Never {
        _ = Array(text.utf8).withUnsafeBytes { writeFully(code == 0 ? 1 : 2, $0) }
        Glibc.exit(code)
    }

    /// The pool of one worker: the image and documents families forked from this program (a
    /// PDF's poppler is loaded by the child, before it confines itself), any other family's
    /// program spawned; the limits `thumbcache`'s defaults give a one-file call.
    static func decoding() -> WorkerPool {
        var configuration = WorkerPool.Configuration(workers: 1, timeout: 20, memoryLimit: 1 << 30)
        configuration.fork = fork
        return WorkerPool(configuration)
    }

    /// The image and documents families, forked. The children build their own system-call
    /// filters: one built here measured no faster (Docs/PERFORMANCE.md, "A forked worker's filter
    /// built by its parent").
    static let fork = WorkerFork(families: [.images, .documents]) { family, arguments in
        WorkerMain.run(decoders: family == .documents ? .documents : .images, arguments: [family.executableName] + arguments)
    }

    /// The worker forked from a constructor for the call's PDF, JPEG or PNG (cearly.h).
    enum EarlyStart {
        /// In that child: becomes the worker (a PDF's has loaded poppler already), which waits for
        /// its arguments. Returns elsewhere.
        static func becomeWorkerIfForked() {
            guard cearly_is_worker() != 0 else { return }
            let child = cearly_child()
            fork.becomeEarlyWorker(familyName: child.family, formatName: child.format)
        }

        /// In the parent: keeps the worker for the pool the call makes (a call that hands on to
        /// `thumbcache` or fails ends it, as does this program's exit).
        static func keep() {
            var forked = cearly_worker()
            guard cearly_take(&forked) != 0, let worker = EarlyWorker(pid: forked.pid, familyName: forked.family, channel: forked.channel,
                                                                       errors: forked.errors, arguments: forked.arguments) else { return }
            WorkerFork.keepEarly(worker)
        }
    }

    /// Replaces this process with `thumbcache freedesktop thumbnail` on the same call: beside this
    /// program (a build's products), else in the `bin` of the prefix whose `libexec/thumbcache`
    /// holds it (the package's), else on `PATH`.
    static func handOn(size: String, input: String, output: String) -> Never {
        let candidates = ProgramPaths.currentExecutable.map { ProgramPaths.companionDirectories(of: $0) }?.map { $0 + "/thumbcache" } ?? []
        guard let program = candidates.first(where: { access($0, X_OK) == 0 }) ?? ProgramPaths.resolve("thumbcache") else {
            exit(1, saying: "Error: \(input): thumbcache was not found beside this program or on PATH, and this file needs it\n")
        }
        let arguments = [program, "freedesktop", "thumbnail", "--size", size, input, output]
        let pointers = arguments.map { strdup($0) } + [nil]
        execv(program, pointers)
        exit(1, saying: "Error: \(input): cannot run \(program): \(Errno.current)\n")
    }
}
