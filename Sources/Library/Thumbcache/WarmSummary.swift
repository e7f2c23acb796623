import ThumbcacheRemote

/// Counts as a warm goes.
public struct WarmProgress: Sendable {
    /// Files done.
    public var files: Int
    public var failed: Int
    /// Files found by the walk so far; final once ``walkComplete``.
    public var found: Int
    public var walkComplete: Bool
    /// Nanoseconds since the warm started.
    public var elapsed: Int64

    /// Seconds left at the current rate, once the walk has counted every file.
    public var estimatedSecondsLeft: Double? {
        guard walkComplete, files > 0, elapsed > 0 else { return nil }
        return Double(max(0, found - files)) * Double(elapsed) / 1e9 / Double(files)
    }
}

/// What a warm did. Every file found lands in exactly one of the counts after `seen`.
public struct WarmSummary: Sendable, Codable, Hashable {
    /// Regular files found (and paths that failed before they could be read).
    public var seen: Int
    /// Files of other shares, left alone (with ``Warmer/Options/shard``).
    public var outsideShard: Int = 0
    /// FIFOs, sockets and devices under the roots (or named as one), passed over unopened: a
    /// read could block forever or never end. Not among ``seen``.
    public var specialFiles: Int = 0
    /// Images whose thumbnails were made now (decoded here).
    public var generated: Int
    /// Files whose missing thumbnails all came from the remote tier (nothing decoded).
    public var fetched: Int = 0
    /// Images whose thumbnails were all in the cache already.
    public var alreadyCached: Int
    /// Files whose bytes equal another path's seen in this run: nothing made twice.
    public var sameContentAsAnother: Int
    /// Files of a type no provider handles, or with no picture to show (an audio file without a
    /// cover): recorded in the stat cache, no thumbnail, the type's icon stands in.
    public var notSupported: Int
    /// Paths that failed, grouped by reason.
    public var failures: [String: [String]]
    public var elapsedSeconds: Double
    /// What happened in the metadata index, if the warm fed one.
    public var index: IndexSummary?
    /// What was written to the freedesktop thumbnail cache, if the warm exported to it.
    public var freedesktop: FreedesktopSummary?
    /// What the remote tier did, if the warm had one.
    public var remote: RemoteWarmSummary?
    /// Why the cache's records could not be written (a full file system, an I/O error), each
    /// reason once; the files concerned are among ``failures`` too.
    public var cacheWriteFailures: [String] = []
    /// Of ``failed``, the files that failed for a reason of the moment (their decoder's worker
    /// killed from outside), and index items read only in part for that reason: nothing is
    /// remembered against them, and a later warm makes them.
    public var transientFailures: Int = 0

    public var failed: Int { failures.values.reduce(0) { $0 + $1.count } }

    /// Whether the cache or the index could not be written: what a warm made is (partly) lost,
    /// and a script should know (`warm` exits with status 74).
    public var couldNotWrite: Bool { !cacheWriteFailures.isEmpty || !(index?.errors.isEmpty ?? true) }
}

/// What a warm's remote tier did.
public struct RemoteWarmSummary: Sendable, Codable, Hashable {
    /// The remote, as configured (no credentials).
    public var remote: String
    public var statistics: RemoteStatistics
    public var uploads: RemoteUploadSummary
}

/// What a warm did to the metadata index.
public struct IndexSummary: Sendable, Codable, Hashable {
    public var added = 0
    public var updated = 0
    /// Files found at a new path with the content of a vanished one.
    public var moved = 0
    public var unchanged = 0
    /// Indexed files under the roots that no longer exist.
    public var removed = 0
    /// Contents whose words were read and indexed (once per content: a copy or an unchanged
    /// file costs nothing).
    public var texts = 0
    /// Index writes that failed (the reason of each).
    public var errors: [String] = []
}
