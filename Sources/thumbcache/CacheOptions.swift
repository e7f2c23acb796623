import ArgumentParser
import ThumbcacheIndex
import ThumbcacheLMDB
import ThumbcacheStore

/// Options every command that opens the cache shares.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Cache directory (default: $THUMBCACHE_DIR, else $XDG_CACHE_HOME/thumbcache, else ~/.cache/thumbcache).",
        valueName: "dir"))
    var cache: String?

    var directory: String { cache ?? ThumbnailStore.defaultDirectory }

    /// Opens the cache, creating it if needed.
    func open(durability: Environment.Durability = .everyCommit) throws -> ThumbnailStore {
        try ThumbnailStore.open(directory: directory, options: .init(durability: durability))
    }

    /// The metadata index beside the thumbnails: `<cache>/index`.
    var indexDirectory: String { directory + "/index" }

    /// Opens the metadata index, creating it if needed.
    func openIndex(durability: Environment.Durability = .everyCommit) throws -> MetadataIndex {
        try MetadataIndex.open(directory: indexDirectory, durability: durability)
    }
}
