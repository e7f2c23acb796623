import FoundationEssentials
import ThumbcacheSync
import ArgumentParser
import Thumbcache

/// Options every command that opens the cache shares.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Cache directory (default: $THUMBCACHE_DIR, else $XDG_CACHE_HOME/thumbcache, else ~/.cache/thumbcache).",
        valueName: "dir"))
    var cache: String?

    @Flag(name: .long, help: ArgumentHelp(
        "Key files above 64 MiB by all their bytes, not by samples (the size, the first and last MiB and 64 pieces between). Slower on large videos; for files edited in place in their middle (disk images)."))
    var fullHash = false

    var directory: String { cache ?? ThumbnailStore.defaultDirectory }

    /// Opens the cache, creating it if needed.
    func open(durability: ThumbnailStore.Durability = .lastCommitMayBeLost) throws -> ThumbnailStore {
        try ThumbnailStore.open(directory: directory, options: .init(durability: durability, keying: fullHash ? .full : .standard))
    }

    /// Stops a command that only reads or tidies the cache where there is none: a mistyped
    /// `--cache` would otherwise be made into an empty cache and reported on as one.
    func requireExisting(toDo what: String) throws {
        // The directory, not `ThumbnailStore.exists`: a cache may hold its index alone.
        guard FilePaths.isDirectory(directory) else {
            throw CommandFailure("no cache at \(directory): nothing to \(what) (`thumbcache warm DIR` or `thumbcache get FILE` makes one)")
        }
    }

    /// The metadata index beside the thumbnails: `<cache>/index`.
    var indexDirectory: String { directory + "/index" }

    /// Opens the metadata index, creating it if needed; says so on standard error when an older
    /// format is upgraded first (the only wait on opening).
    func openIndex(durability: MetadataIndex.Durability = .everyCommit) throws -> MetadataIndex {
        var started: Date?
        let index = try MetadataIndex.open(directory: indexDirectory, durability: durability) { from, to in
            started = Date()
            Self.note("upgrading the search index in \(indexDirectory) from format \(from) to \(to) (once; about 10 s per million items)…")
        }
        if let started { Self.note("search index upgraded in \(fixed(Date().timeIntervalSince(started), places: 1)) s") }
        return index
    }

    private static func note(_ text: String) {
        writeStandardError("thumbcache: \(text)\n")
    }
}
