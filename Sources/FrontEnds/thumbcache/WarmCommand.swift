import ArgumentParser
import FoundationEssentials
import ThumbcacheSync
import Glibc
import Thumbcache
import Synchronization

struct WarmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "warm",
        abstract: "Precompute the cache for every file under the given paths.",
        discussion: """
            Walks directories recursively (never into the cache itself; symbolic links are \
            skipped unless --follow-symlinks, and loops end), identifies every file by the hash \
            of its bytes, and makes the missing thumbnails of its images (PNG, JPEG, WebP, GIF, \
            TIFF, HEIC, AVIF, JPEG XL, SVG, camera raw, BMP, ICO, Netpbm, TGA, QOI), videos, audio \
            covers, PDFs, office documents, e-books, comics, fonts and text files in parallel \
            for each size × scale; one writer commits them in batches. A file the stat cache \
            knows unchanged is not read again, so a second warm is fast. Files with the same \
            bytes share one thumbnail.

            Every file walked (of any type) is also indexed for `thumbcache search`: name, \
            path, size, dates, type, and for images pixel size, bits per sample, colour model, \
            alpha, frame count and EXIF (camera, lens, exposure, GPS, dates); for media and \
            documents duration, codecs, pages, title, authors, album, font family; plus tags and a \
            comment from the user.xdg.tags / user.xdg.comment extended attributes; and the words \
            inside PDFs, office files, e-books, HTML, text and source files, subtitles and mail \
            (read in the sandboxed document worker, once per distinct content, at most \
            --text-limit bytes each; `thumbcache search` finds and ranks them). Changed \
            files are re-indexed, files gone from under the warmed paths are dropped, and a \
            file moved to a new path keeps its index entry. --no-index skips all of that.

            Files are decoded in sandboxed worker processes (one per job for each family of \
            formats met: images, documents, video and audio; reused across files, each confined \
            with seccomp before it reads a byte; see SECURITY.md in /usr/share/doc/thumbcache \
            or Docs/): a decoder that crashes, hangs past --timeout or uses more than \
            --memory-limit costs only the file it was decoding, and its worker is replaced.

            A file that cannot be read or decoded is reported with its path and reason, and \
            remembered so that later warms do not retry it (--retry-failed does); the warm goes \
            on. The exit status is 0 unless --strict is given and a file failed (then 1). \
            A warm that could not write the cache or the index (a full file system, an I/O \
            error) says so and exits with status 74 (EX_IOERR), --strict or not: what it \
            made was not all kept.

            --freedesktop also writes the thumbnails every Linux file manager reads \
            ($XDG_CACHE_HOME/thumbnails, the freedesktop.org Thumbnail Managing Standard): \
            for each file and each of --freedesktop-sizes, a PNG named by the MD5 of its file:// \
            URI, with its URI, modification time, size and MIME type, made from the thumbnail \
            in thumbcache's cache (no second decode). A file that failed gets an entry under \
            fail/thumbcache-VERSION/. Valid thumbnails are left alone, so a second warm writes \
            only what changed. `thumbcache compact --freedesktop` cleans that cache.

            Examples:
              thumbcache warm ~/Pictures
              thumbcache warm --freedesktop ~/Pictures
              thumbcache warm --freedesktop --freedesktop-sizes large,x-large ~/Videos
              find ~/Pictures -newer last-run -print0 | thumbcache warm --files-from - --null
            """
    )

    @Argument(help: ArgumentHelp("Files or directories to warm.", valueName: "path"))
    var paths: [String] = []

    @Option(name: .long, help: ArgumentHelp(
        "Also warm the files and directories listed in FILE, one a line (- reads standard input); a listed path that is gone is reported as failed, not fatal.",
        valueName: "file"))
    var filesFrom: String?

    @Flag(name: .long, help: "The --files-from list is separated by NUL bytes, as find -print0 writes it.")
    var null = false

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(name: .long, inversion: .prefixedNo, help: "Use a valid thumbnail another program left in $XDG_CACHE_HOME/thumbnails instead of decoding the file.")
    var freedesktopImport = true

    @OptionGroup var decoderOptions: DecoderOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var remoteOptions: RemoteOptions

    @Flag(name: .long, help: "With --remote, do not wait at the end for the queued uploads: the next run (or a daemon) sends them.")
    var noWaitUploads = false

    @Option(name: .long, help: ArgumentHelp(
        "Warm only share K of N of the files (by a hash of each file's path below its root): N machines with --shard 1/N … N/N and one --remote split a tree between them, then each fetches the rest.",
        valueName: "K/N"))
    var shard: String?

    @Option(name: .shortAndLong, help: "Thumbnail size in points (the largest side).")
    var size: Int = 256

    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp("Scales to make, comma-separated (e.g. 1,2).", valueName: "scales"))
    var scale: [String] = ["1"]

    @Option(name: .shortAndLong, help: "Parallel workers (the default is one per core and one more).")
    var jobs: Int = Warmer.defaultJobs

    @Flag(name: .long, help: "Try again files whose thumbnail failed in an earlier warm.")
    var retryFailed = false

    @Flag(name: .long, help: "Follow symbolic links to files and directories.")
    var followSymlinks = false

    @Flag(name: .long, help: "Print the summary as JSON on standard output.")
    var json = false

    @Flag(name: .long, help: "Exit with status 1 if any file failed.")
    var strict = false

    @Flag(name: .long, help: "Do not index file metadata for search (thumbnails only).")
    var noIndex = false

    @Option(name: .long, help: ArgumentHelp("Most bytes of text to index from each file, like 64K or 1M; 0 reads no words.",
                                            valueName: "size"))
    var textLimit: String = "1M"

    @Flag(name: .long, help: "Also write the freedesktop standard's thumbnails (for file managers).")
    var freedesktop = false

    @Option(name: .long, parsing: .singleValue, help: ArgumentHelp(
        "Standard sizes to write, comma-separated: normal (128 px), large (256), x-large (512), xx-large (1024).", valueName: "sizes"))
    var freedesktopSizes: [String] = ["normal,large"]

    @Option(name: .long, help: ArgumentHelp("The standard thumbnail cache (default: $XDG_CACHE_HOME/thumbnails).", valueName: "dir"))
    var freedesktopDir: String?

    var standardSizes: [FreedesktopThumbnailCache.Size] {
        freedesktopSizes.flatMap { $0.split(separator: ",") }.compactMap { FreedesktopThumbnailCache.Size(rawValue: $0.trimmingWhitespace(newlines: false)) }
    }

    var scales: [Double] {
        scale.flatMap { $0.split(separator: ",") }.compactMap { Double($0.trimmingWhitespace(newlines: false)) }
    }

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard textLimit == "0" || CompactCommand.parseSize(textLimit).map({ $0 >= 1 && $0 <= 64 << 20 }) == true else {
            throw ValidationError("--text-limit takes 0 or a size up to 64M, like 64K or 1M, got '\(textLimit)'")
        }
        guard (1...4096).contains(size) else { throw ValidationError("--size must be between 1 and 4096") }
        let parsed = scale.flatMap { $0.split(separator: ",") }
        guard !parsed.isEmpty, parsed.allSatisfy({ Double($0.trimmingWhitespace(newlines: false)).map { $0 > 0 && $0 <= 8 } ?? false }) else {
            throw ValidationError("--scale takes numbers between 0 and 8, comma-separated, like 1,2")
        }
        let sizeNames = freedesktopSizes.flatMap { $0.split(separator: ",") }.map { $0.trimmingWhitespace(newlines: false) }
        if let bad = sizeNames.first(where: { FreedesktopThumbnailCache.Size(rawValue: $0) == nil }) {
            throw ValidationError("unknown standard size '\(bad)': use normal, large, x-large or xx-large")
        }
        if let shard, WarmShard(shard) == nil {
            throw ValidationError("--shard takes K/N with 1 ≤ K ≤ N, like 2/3")
        }
        guard !paths.isEmpty || filesFrom != nil else { throw ValidationError("give the paths to warm, or --files-from a list of them") }
        if null && filesFrom == nil { throw ValidationError("--null says how the --files-from list is separated; give --files-from too") }
        for path in paths where !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no such file or directory: \(path)")
        }
    }

    func run() async throws {
        // First, so that a list that cannot be read, wrong credentials or a missing bucket stop
        // the warm before anything is opened or started.
        let listed = try filesFrom.map { source throws(CommandFailure) in try PathList.read(source, nulSeparated: null) } ?? []
        let remote = try remoteOptions.open()
        // Warming writes a lot and the cache can be rebuilt: commits are flushed to disk at
        // checkpoints and at the end instead of after every batch (see Docs/ARCHITECTURE.md).
        let store = try cacheOptions.open(durability: .deferred)
        let (providers, types) = pluginOptions.providers(decoderOptions)
        let warmer = Warmer(store: store, providers: providers, types: types)
        let progress = ProgressLine()
        let specs = Set(scales).sorted().map { ThumbnailSpec(size: size, scale: $0) }
        let index = noIndex ? nil : try cacheOptions.openIndex(durability: .deferred)
        var options = Warmer.Options(jobs: jobs, followSymbolicLinks: followSymlinks, specs: specs, retryFailed: retryFailed, index: index,
                                     isolation: decoderOptions.isolation(),
                                     freedesktop: freedesktop ? FreedesktopExport(cache: FreedesktopThumbnailCache(directory: freedesktopDir ?? FreedesktopThumbnailCache.defaultDirectory), sizes: standardSizes) : nil,
                                     standardThumbnails: freedesktopImport ? FreedesktopThumbnailCache(directory: freedesktopDir ?? FreedesktopThumbnailCache.defaultDirectory) : nil,
                                     remote: remote, waitForUploads: !noWaitUploads, shard: shard.flatMap(WarmShard.init))
        options.textLimit = textLimit == "0" ? 0 : CompactCommand.parseSize(textLimit) ?? 1 << 20
        var report: (@Sendable (WarmProgress) -> Void)?
        if progress.isEnabled { report = { progress.update($0) } }
        let summary = await warmer.warm(paths + listed, options: options, progress: report)
        progress.finish()
        // App items past their expiration date go now (warm is the one command run regularly).
        _ = try index?.sweepExpired(now: Date().timeIntervalSince1970)
        try index?.sync()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        } else {
            print(summary.report(cache: store.directory))
        }
        if summary.couldNotWrite {
            writeStandardError(summary.unwrittenAdvice(cache: store.directory) + "\n")
            throw ExitCode(74)
        }
        if strict && summary.failed > 0 { throw ExitCode(1) }
    }
}

extension WarmSummary {
    /// What `warm` says once when the cache or the index could not be written, and what to do.
    func unwrittenAdvice(cache: String) -> String {
        let reasons = cacheWriteFailures + (index?.errors ?? [])
        let full = reasons.contains { $0.contains("No space left on device") || $0.contains("Disk quota exceeded") }
        var what: [String] = []
        if !cacheWriteFailures.isEmpty { what.append("the thumbnails of \(failures.filter { cacheWriteFailures.contains($0.key) }.values.reduce(0) { $0 + $1.count }) files were not stored") }
        if let index, !index.errors.isEmpty { what.append("the index was not fully updated") }
        let cause = full ? "the file system holding it is full" : "writing failed (\(reasons.first ?? "unknown error"))"
        let todo = full ? "free some space there (or give --cache a place with room) and run the warm again"
            : "check the disk and its permissions, then run the warm again"
        return "thumbcache warm: could not write the cache at \(cache): \(cause); \(what.joined(separator: " and ")). To finish, \(todo)."
    }

    /// The human-readable summary.
    func report(cache: String) -> String {
        let rate = elapsedSeconds > 0 ? Double(seen) / elapsedSeconds : 0
        var lines = [
            "Warmed \(seen) files in \(fixed(elapsedSeconds, places: 2)) s (\(Int(rate)) files/s) into \(cache)",
            "  thumbnails made:              \(generated)",
        ] + (remote == nil ? [] : [
            "  fetched from the remote:      \(fetched)",
        ]) + [
            "  already cached:               \(alreadyCached)",
            "  same content as another path: \(sameContentAsAnother)",
            "  no thumbnail (icon instead):  \(notSupported)",
            "  failed:                       \(failed)",
        ] + (outsideShard == 0 ? [] : [
            "  other shards' files:          \(outsideShard)",
        ]) + (specialFiles == 0 ? [] : [
            "  FIFOs, sockets, devices (passed over): \(specialFiles)",
        ])
        if let i = index {
            lines.append("  index: \(i.added) added, \(i.updated) updated, \(i.moved) moved, \(i.removed) removed, \(i.unchanged) unchanged, \(i.texts) texts read")
            var shown: [String] = []
            for e in i.errors where !shown.contains(e) { shown.append(e) }
            for e in shown.prefix(5) { lines.append("    index error: \(e)") }
        }
        if let r = remote {
            let s = r.statistics
            lines.append("  remote \(r.remote): \(s.fetched) fetched (\(Self.megabytes(s.bytesFetched))), \(r.uploads.uploaded) uploaded, "
                + "\(r.uploads.stillQueued) still queued" + (s.rejected > 0 ? ", \(s.rejected) invalid objects skipped" : ""))
            if let reason = s.unavailable {
                lines.append("    unavailable at times (\(reason)); what could not go up waits for the next run")
            } else if let reason = s.firstError {
                lines.append("    \(s.errors) requests failed, the first: \(reason)")
            }
            if let e = r.uploads.storeError { lines.append("    upload queue error: \(e)") }
        }
        if let f = freedesktop {
            lines.append("  freedesktop: \(f.written) thumbnails written, \(f.unchanged) files unchanged, \(f.failuresRecorded) failures recorded")
            for e in f.errors.prefix(5) { lines.append("    freedesktop error: \(e)") }
            if f.errors.count > 5 { lines.append("    … and \(f.errors.count - 5) more (use --json for all)") }
        }
        for (reason, paths) in failures.sorted(by: { $0.key < $1.key }) {
            lines.append("    \(reason): \(paths.count)")
            for path in paths.prefix(20) { lines.append("      \(path)") }
            if paths.count > 20 { lines.append("      … and \(paths.count - 20) more (use --json for all)") }
        }
        return lines.joined(separator: "\n")
    }

    static func megabytes(_ bytes: Int) -> String { fixed(Double(bytes) / 1e6, places: 1) + " MB" }
}

/// A one-line progress display on standard error, only when it is a terminal.
final class ProgressLine: Sendable {
    let isEnabled = isatty(2) == 1
    private let last = Mutex<Int64>(0)

    func update(_ p: WarmProgress) {
        let due = last.withLock { last -> Bool in
            guard p.elapsed - last >= 100_000_000 else { return false }
            last = p.elapsed
            return true
        }
        guard due else { return }
        let rate = Double(p.files) / max(Double(p.elapsed) / 1e9, 0.001)
        var text = "\r\u{1B}[K  \(p.files)" + (p.walkComplete ? "/\(p.found)" : "") + " files, \(Int(rate))/s"
        if p.failed > 0 { text += ", \(p.failed) failed" }
        if let left = p.estimatedSecondsLeft { text += ", about \(Int(left.rounded(.up))) s left" }
        writeStandardError(text)
    }

    func finish() {
        if isEnabled { writeStandardError("\r\u{1B}[K") }
    }
}
