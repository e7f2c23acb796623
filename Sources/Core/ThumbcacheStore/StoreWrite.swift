#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One change to the store; a batch of them commits in one transaction.
package enum StoreWrite: Sendable, Hashable {
    /// Remember `path`'s snapshot and content hash in the stat cache.
    case file(path: String, StatEntry)
    /// Forget `path` in the stat cache.
    case removeFile(path: String)
    /// Store a thumbnail.
    case thumbnail(ThumbnailKey, ThumbnailHeader, data: [UInt8])
    /// Remember that generation failed for this content and generator version.
    case failure(content: ContentHash, generatorVersion: UInt32, FailureRecord)
    /// Forget a failure, so that generation is tried again.
    case clearFailure(content: ContentHash, generatorVersion: UInt32)
    /// A thumbnail was served at this minute (minutes since 1970): the recency eviction uses.
    case accessed(ThumbnailKey, minute: UInt32)
    /// Queue the thumbnail under this key for upload to a remote tier, with the attributes
    /// (opaque here) that travel with it. Committed with the thumbnail, so no crash loses it.
    case queueUpload(ThumbnailKey, attributes: [UInt8])
    /// The thumbnail went up (or is gone): take it off the queue.
    case dequeueUpload(ThumbnailKey)

    /// How recent a file's modification or change time may be before its stat entry is not
    /// trusted: 2 s, coarser than the timestamp tick of any file system Linux mounts.
    package static let racyWindow: Int64 = 2_000_000_000

    /// A stat-cache entry for a file just hashed; marked racy if its times are within
    /// two seconds of `now`, since a write in the same timestamp tick would go unseen.
    package static func file(
        path: String, snapshot: FileSnapshot, content: ContentHash, type: CachedContentType? = nil, vouch: StatVouch? = nil,
        now: Int64 = StoreClock.nowNanoseconds()
    ) -> StoreWrite {
        let racy = max(snapshot.modificationTime, snapshot.changeTime) > now - racyWindow
        return .file(path: path, StatEntry(snapshot: snapshot, content: content, isRacy: racy, type: type, vouch: vouch))
    }

    /// Approximate bytes this write adds, for batching.
    var byteCount: Int {
        switch self {
        case .file(let path, let entry):
            path.utf8.count + StatEntry.fixedSize + (entry.type.map { $0.identifier.utf8.count + 4 } ?? 0) + (entry.vouch == nil ? 0 : StatVouch.encodedSize)
        case .removeFile(let path): path.utf8.count
        case .thumbnail(_, let header, let data): ThumbnailKey.encodedSize + 32 + header.sourceContentType.utf8.count + data.count
        case .failure(_, _, let record): 32 + record.reason.utf8.count
        case .clearFailure: 20
        case .accessed: ThumbnailKey.encodedSize + 4
        case .queueUpload(_, let attributes): ThumbnailKey.encodedSize + attributes.count
        case .dequeueUpload: ThumbnailKey.encodedSize
        }
    }
}

/// Wall-clock time as the store records it.
package enum StoreClock {
    /// Nanoseconds since 1970.
    package static func nowNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
