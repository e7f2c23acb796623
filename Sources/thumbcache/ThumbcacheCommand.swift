import ArgumentParser

@main
struct ThumbcacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbcache",
        abstract: "Make, cache and serve thumbnails; index file metadata for search.",
        discussion: """
            The cache is an embedded LMDB database: nothing to start. It lives in \
            $THUMBCACHE_DIR, else $XDG_CACHE_HOME/thumbcache, else ~/.cache/thumbcache; \
            --cache overrides all of them.

            Examples:
              thumbcache warm ~/Pictures          precompute everything under ~/Pictures
              thumbcache get a.jpg -o a.png       one thumbnail, cached
              thumbcache stats --json             what the cache holds, as JSON
              thumbcache thumbnail a.jpg -o a.png  one thumbnail, no cache
            """,
        subcommands: [WarmCommand.self, GetCommand.self, StatsCommand.self, ThumbnailCommand.self]
    )
}
