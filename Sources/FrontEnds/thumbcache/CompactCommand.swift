import ArgumentParser
import Thumbcache
import FoundationEssentials
import ThumbcacheSync

struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Remove what the cache no longer needs, keep it within a size, and rewrite it smaller.",
        discussion: """
            --gc drops the entries of files that are gone or changed, then every thumbnail and \
            failure record whose content no remaining file has. --max-size removes least \
            recently used thumbnails (by last use, else creation) until the thumbnails fit. \
            Then the cache file is rewritten without its free space (LMDB never shrinks it by \
            itself). The search index's words inside files lose the texts no file holds any \
            more (of files changed or gone since they were read) and are rewritten into full \
            pages. --dry-run reports without changing anything.

            Other processes may keep using the cache meanwhile: they go on reading the old copy \
            until they notice the new one, and no write is lost. Killing a compaction leaves a \
            usable cache.

            --freedesktop also cleans the freedesktop thumbnail cache ($XDG_CACHE_HOME/thumbnails, \
            which file managers fill and nobody cleans): every program's thumbnails whose file is \
            gone or changed are removed, in each size directory and under fail/; with \
            --freedesktop-max-size, then the least recently used until the rest fit. Thumbnails \
            of files that are not local (sftp://, trash://) are kept.

            Examples:
              thumbcache compact --gc --dry-run
              thumbcache compact --max-size 500M --json
              thumbcache compact --freedesktop --freedesktop-max-size 200M
            """
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(name: .long, help: "Remove entries of deleted or changed files and thumbnails no file needs.")
    var gc = false

    @Option(name: .long, help: ArgumentHelp("Keep thumbnails within this size (e.g. 500M, 2G, 800K).", valueName: "size"))
    var maxSize: String?

    @Flag(name: .long, help: "Also remove standard thumbnails ($XDG_CACHE_HOME/thumbnails) of deleted or changed files.")
    var freedesktop = false

    @Option(name: .long, help: ArgumentHelp("Keep the standard thumbnail cache within this size (with --freedesktop).", valueName: "size"))
    var freedesktopMaxSize: String?

    @Option(name: .long, help: ArgumentHelp("The standard thumbnail cache (default: $XDG_CACHE_HOME/thumbnails).", valueName: "dir"))
    var freedesktopDir: String?

    @Flag(name: .long, help: "Report what would be removed; change nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    var budget: Int? { maxSize.flatMap(Self.parseSize) }

    func validate() throws {
        if let maxSize, Self.parseSize(maxSize) == nil {
            throw ValidationError("--max-size takes a size like 500M, 2G or 800K, got '\(maxSize)'")
        }
        if let size = freedesktopMaxSize {
            guard Self.parseSize(size) != nil else { throw ValidationError("--freedesktop-max-size takes a size like 200M, got '\(size)'") }
            guard freedesktop else { throw ValidationError("--freedesktop-max-size needs --freedesktop") }
        }
    }

    /// "500M" → 500 × 2^20; plain numbers are bytes.
    static func parseSize(_ text: String) -> Int? {
        var t = text.uppercased()
        if t.hasSuffix("B") { t.removeLast() }
        if t.hasSuffix("I") { t.removeLast() }
        // A switch, not a dictionary: a `get` parses the decoders' memory limit, and a dictionary
        // keyed by Character looked up its Hashable conformance among all linked in (PERFORMANCE.md).
        let factor: Int
        switch t.last {
        case "K": factor = 1 << 10
        case "M": factor = 1 << 20
        case "G": factor = 1 << 30
        case "T": factor = 1 << 40
        default: factor = 1
        }
        if factor > 1 { t.removeLast() }
        guard let value = Double(t), value >= 0 else { return nil }
        return Int(value * Double(factor))
    }

    struct Report: Encodable {
        var before: StoreStatistics
        var after: StoreStatistics
        var gc: MaintenanceReport?
        var eviction: MaintenanceReport?
        var rewrite: CompactionReport?
        var freedesktop: FreedesktopCleaningReport?
        var wordsInsideFiles: TextCompaction?
        var seconds: Double
    }

    func run() throws {
        try cacheOptions.requireExisting(toDo: "compact")
        let store = try cacheOptions.open()
        let start = Date()
        let before = try store.statistics()
        let gcReport = gc ? try store.collectGarbage(dryRun: dryRun) : nil
        let evictReport = try budget.map { try store.evict(toFit: $0, dryRun: dryRun) }
        let rewrite = dryRun ? nil : try store.compactFile()
        // The search index, if there is one (compact never makes one).
        let text = FileManager.default.fileExists(atPath: cacheOptions.indexDirectory + "/data.mdb")
            ? try cacheOptions.openIndex().compactText(dryRun: dryRun) : nil
        let after = try store.statistics()
        let standard = freedesktop
            ? FreedesktopThumbnailCache(directory: freedesktopDir ?? FreedesktopThumbnailCache.defaultDirectory)
                .clean(maxBytes: freedesktopMaxSize.flatMap(Self.parseSize), dryRun: dryRun) : nil
        let report = Report(before: before, after: after, gc: gcReport, eviction: evictReport, rewrite: rewrite, freedesktop: standard,
                            wordsInsideFiles: text, seconds: Date().timeIntervalSince(start))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        func line(_ s: StoreStatistics) -> String {
            "\(s.thumbnails) thumbnails (\(s.thumbnailBytes) bytes), \(s.files) files, \(s.failures) failures; file \(s.fileSize) bytes"
        }
        print(dryRun ? "Dry run: nothing changed." : "Compacted \(store.directory) in \(fixed(report.seconds, places: 2)) s.")
        print("  before: \(line(before))")
        if let g = gcReport {
            print("  gc: \(g.staleFiles) stale file entries, \(g.orphanedThumbnails) orphaned thumbnails, \(g.orphanedFailures) failure records, \(g.bytesRemoved) bytes")
        }
        if let e = evictReport {
            print("  eviction to \(budget!) bytes: \(e.evictedThumbnails) thumbnails, \(e.bytesRemoved) bytes (least recently used first)")
        }
        if let r = rewrite {
            print("  rewrite: \(r.fileSizeBefore) -> \(r.fileSizeAfter) bytes in \(fixed(r.seconds, places: 2)) s (generation \(r.generation))")
        }
        print("  after:  \(line(after))")
        if let t = text {
            print("  words inside files: \(t.documentsRemoved) texts no file holds removed, \(t.bytesBefore) -> \(t.bytesAfter) bytes")
        }
        if let f = standard {
            print("  freedesktop: \(f.examined) thumbnails, \(f.stale) of gone or changed files and \(f.evicted) least recently used removed, "
                + "\(f.bytesBefore) -> \(f.bytesAfter) bytes")
            for e in f.errors.prefix(5) { print("    error: \(e)") }
        }
    }
}
