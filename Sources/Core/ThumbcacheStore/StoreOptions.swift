import ThumbcacheLMDB

extension ThumbnailStore {
    /// How commits reach the disk.
    public enum Durability: Sendable, Hashable {
        /// Every commit is flushed (`fsync`) twice, its data and then its meta page, before it
        /// is reported: survives power loss.
        case everyCommit
        /// A commit's data is flushed before it is reported, its meta page only written: one
        /// flush a commit, half the wait on a spinning disk. A power loss leaves the file intact
        /// and may undo the last commit, whose thumbnails are then made again. The default: a
        /// thumbnail can always be made again (Docs/ARCHITECTURE.md).
        case lastCommitMayBeLost
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

        public init(mapSize: Int = 64 << 20, durability: Durability = .lastCommitMayBeLost, maxReaders: Int = 126,
                    keying: ContentHasher.Keying = .standard) {
            self.mapSize = mapSize
            self.durability = durability
            self.maxReaders = maxReaders
            self.keying = keying
        }

        var environment: Environment.Options {
            let mode: Environment.Durability = switch durability {
            case .everyCommit: .everyCommit
            case .lastCommitMayBeLost: .lastCommitMayBeLost
            case .deferred: .deferred
            }
            return Environment.Options(mapSize: mapSize, maxReaders: maxReaders, durability: mode)
        }
    }
}
