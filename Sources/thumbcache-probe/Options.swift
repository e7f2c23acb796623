import ThumbcacheLMDB
import ThumbcacheStore

typealias ThumbcacheStoreOptions = Environment.Options

extension Environment.Options {
    /// A deliberately tiny initial map, so that concurrent processes keep growing it.
    static var probe: Environment.Options { Environment.Options(mapSize: 1 << 20, durability: .deferred) }
}
