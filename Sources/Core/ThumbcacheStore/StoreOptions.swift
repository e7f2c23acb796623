import ThumbcacheLMDB

extension ThumbnailStore {
    /// How commits reach the disk.
    public enum Durability: Sendable, Hashable {
        /// Every commit is flushed (`fsync`) before it is reported: survives power loss.
        case everyCommit
        /// Commits reach the OS at once and the disk on ``ThumbnailStore/sync()`` (the
        /// `GroupCommitWriter` syncs every few seconds): safe against any process crash,
        /// SIGKILL included; an OS crash or power loss may lose the last seconds (Docs/ARCHITECTURE.md).
        case deferred
    }

    /// How a store is opened.
    public struct Options: Sendable, Hashable {
        /// Initial map size in bytes (address space, not memory or disk); the map grows on demand.
        public var mapSize: Int
        public var durability: Durability
        /// At most this many threads or processes read at once.
        public var maxReaders: Int
        /// How files are keyed: large ones by samples (the default) or every file by all its bytes.
        public var keying: ContentHasher.Keying

        public init(mapSize: Int = 64 << 20, durability: Durability = .everyCommit, maxReaders: Int = 126,
                    keying: ContentHasher.Keying = .standard) {
            self.mapSize = mapSize
            self.durability = durability
            self.maxReaders = maxReaders
            self.keying = keying
        }

        var environment: Environment.Options {
            Environment.Options(mapSize: mapSize, maxReaders: maxReaders, durability: durability == .deferred ? .deferred : .everyCommit)
        }
    }
}
