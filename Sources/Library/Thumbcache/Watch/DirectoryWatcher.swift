import FoundationEssentials
import Glibc
import ThumbcacheStore
import ThumbcacheSync

/// inotify on every directory of some trees: what changed, as paths, moves paired by cookie.
///
/// Directories are watched one by one (inotify is not recursive): a directory created or moved
/// in is added when its event is read, and what it already holds is reported as created. A
/// directory moved within the trees keeps its watch, and its descendants' paths follow.
package final class DirectoryWatcher {
    /// One change, after pairing.
    package enum Change: Equatable, Sendable {
        /// A file written and closed, created, or its attributes (tags) changed.
        case file(String)
        /// A directory that appeared (created or moved in): everything under it is new.
        case directory(String)
        /// Moved within the watched trees.
        case moved(from: String, to: String, isDirectory: Bool)
        /// Deleted, or moved out of the watched trees.
        case removed(String, isDirectory: Bool)
        /// The kernel's queue overflowed: events were lost, the trees must be looked at again.
        case overflow
    }

    private let fd: Int32
    private var pending: [Change] = []
    /// Moves whose other half has not been read yet, by cookie, with when their first half was read.
    private var movedFrom: [UInt32: (path: String, isDirectory: Bool, readAt: UInt64)] = [:]
    private var paths: [Int32: String] = [:]
    private var watches: [String: Int32] = [:]
    /// Directories beyond `maxWatches` or the system's limit: rescanned instead of watched.
    package private(set) var unwatched: [String] = []
    package let maxWatches: Int?
    /// Why some directories are not watched, once said.
    package private(set) var limitMessage: String?

    private static let mask = UInt32(IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF
        | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

    /// - Parameter maxWatches: watch at most this many directories (the rest are rescanned).
    package init(maxWatches: Int? = nil) throws {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw FileError(path: "inotify", reason: .system(operation: "inotify_init1", Errno.current)) }
        self.maxWatches = maxWatches
    }

    deinit { close(fd) }

    package var descriptor: Int32 { fd }
    package var watchedCount: Int { watches.count }

    /// Watches `root` and every directory under it (not following symbolic links, skipping `excluded`).
    /// Returns the directories added.
    @discardableResult
    package func add(tree root: String, excluding excluded: Set<String> = []) -> [String] {
        var added: [String] = []
        var stack = [root]
        while let dir = stack.popLast() {
            guard !excluded.contains(dir), watches[dir] == nil else { continue }
            guard addWatch(dir) else { continue }
            added.append(dir)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            for name in names {
                let path = dir + "/" + name
                var s = stat()
                if lstat(path, &s) == 0, s.st_mode & S_IFMT == S_IFDIR { stack.append(path) }
            }
        }
        return added
    }

    private func addWatch(_ dir: String) -> Bool {
        if let maxWatches, watches.count >= maxWatches {
            unwatched.append(dir)
            limitMessage = "watching \(maxWatches) directories at most (--max-watches): \(unwatched.count) more are rescanned instead"
            return false
        }
        let wd = inotify_add_watch(fd, dir, Self.mask)
        guard wd >= 0 else {
            if errno == ENOSPC {
                unwatched.append(dir)
                let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8))?
                    .trimmingWhitespace() ?? "?"
                limitMessage = "the system's inotify watch limit is reached (fs.inotify.max_user_watches = \(limit)): \(unwatched.count) directories are rescanned instead of watched; raise it with `sysctl fs.inotify.max_user_watches=…`"
            }
            return false
        }
        paths[wd] = dir
        watches[dir] = wd
        return true
    }

    private func forget(tree dir: String) {
        for (path, wd) in watches where path == dir || path.hasPrefix(dir + "/") {
            inotify_rm_watch(fd, wd)
            watches[path] = nil
            paths[wd] = nil
        }
    }

    private func rename(tree from: String, to: String) {
        for (path, wd) in watches where path == from || path.hasPrefix(from + "/") {
            let new = to + path.dropFirst(from.count)
            watches[path] = nil
            watches[new] = wd
            paths[wd] = new
        }
    }

    /// How long a move's first half waits for its second before it counts as a move out of the
    /// trees: the kernel queues the halves one after the other, and a read can come between them
    /// (a directory renamed within would otherwise be one removed and one new, its items renumbered).
    package static let pairingGrace: UInt64 = 500_000_000

    /// When a move's first half, read without its second, is next due to become a removal
    /// (``MonotonicClock`` nanoseconds): the caller's ``take(now:)`` is due then.
    package var pairingDeadline: UInt64? { movedFrom.values.map(\.readAt).min().map { $0 + Self.pairingGrace } }

    /// Reads what is waiting (never blocks) into the pending changes; true if anything came.
    @discardableResult
    package func read() -> Bool {
        var got = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            got = true
            buffer.withUnsafeBytes { ingest(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        }
        return got
    }

    /// Reads whole inotify events as the kernel wrote them (`read` gives them here; a test can
    /// give a stream cut where a read could fall).
    package func ingest(_ buffer: UnsafeRawBufferPointer, now: UInt64 = MonotonicClock.nanoseconds()) {
        var changes: [Change] = []
        defer { pending += changes }
        let n = buffer.count
        var offset = 0
        while offset + 16 <= n {
            let (wd, mask, cookie, length) = (buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                                              buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                                              buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self),
                                              Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
            let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
            offset += 16 + length
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                changes.append(.overflow)
                continue
            }
            if mask & UInt32(IN_IGNORED) != 0 {
                if let dir = paths[wd] { watches[dir] = nil }
                paths[wd] = nil
                continue
            }
            guard let dir = paths[wd], !nameBytes.isEmpty else { continue }
            let path = dir + "/" + String(decoding: nameBytes, as: UTF8.self)
            let isDir = mask & UInt32(IN_ISDIR) != 0
            if mask & UInt32(IN_MOVED_FROM) != 0 {
                movedFrom[cookie] = (path, isDir, now)
            } else if mask & UInt32(IN_MOVED_TO) != 0 {
                if let from = movedFrom.removeValue(forKey: cookie)?.path {
                    if isDir { rename(tree: from, to: path) }
                    changes.append(.moved(from: from, to: path, isDirectory: isDir))
                } else if isDir {
                    add(tree: path)
                    changes.append(.directory(path))
                } else {
                    changes.append(.file(path))
                }
            } else if mask & UInt32(IN_CREATE) != 0 {
                if isDir {
                    add(tree: path)
                    changes.append(.directory(path))
                }  // a file is reported when it is closed after writing
            } else if mask & UInt32(IN_DELETE) != 0 {
                changes.append(.removed(path, isDirectory: isDir))
            } else if mask & UInt32(IN_CLOSE_WRITE | IN_ATTRIB) != 0, !isDir {
                changes.append(.file(path))
            }
        }
    }

    /// The changes read so far. A move whose other half has not come within ``pairingGrace`` was
    /// a move out of the trees; one read more recently waits for a later call.
    package func take(now: UInt64 = MonotonicClock.nanoseconds()) -> [Change] {
        for (cookie, move) in movedFrom where now >= move.readAt + Self.pairingGrace {
            movedFrom[cookie] = nil
            if move.isDirectory { forget(tree: move.path) }
            pending.append(.removed(move.path, isDirectory: move.isDirectory))
            // Put back meanwhile (its creation was read while the move waited): it is what is there now.
            var s = stat()
            guard lstat(move.path, &s) == 0 else { continue }
            if s.st_mode & S_IFMT == S_IFDIR {
                add(tree: move.path)
                pending.append(.directory(move.path))
            } else {
                pending.append(.file(move.path))
            }
        }
        defer { pending = [] }
        return pending
    }
}
