import ThumbcacheStore
import ThumbcacheSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Walks directory trees depth-first with `readdir`, yielding regular files.
///
/// It never descends into the excluded directories (the cache itself), never visits a
/// directory twice (so symbolic-link loops end), and reports unreadable directories and
/// dangling links as per-path errors instead of stopping.
package struct DirectoryWalker: Sendable {
    package enum Entry: Sendable {
        /// A regular file, with what `stat` said of it when the walk saw it (a link followed: of
        /// its target), so that it need not be looked up again; nil if that failed.
        case file(String, FileSnapshot?)
        /// Neither a regular file nor a directory (a FIFO, a socket, a device): never opened, but
        /// counted, so that a warm can say what it passed over.
        case special(String)
        case failure(FileError)
    }

    package var followSymbolicLinks: Bool
    /// Directories (by device and inode) not to enter.
    private var excluded: Set<DirectoryID>

    struct DirectoryID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    package init(followSymbolicLinks: Bool = false, excluding excludedPaths: [String] = []) {
        self.followSymbolicLinks = followSymbolicLinks
        excluded = Set(excludedPaths.compactMap { path in
            (try? FileSnapshot.of(path: path)).map { DirectoryID(device: $0.device, inode: $0.inode) }
        })
    }

    /// Visits every regular file under `roots` (a root may itself be a file), depth first, each
    /// directory's subdirectories in name order.
    package func walk(_ roots: [String], _ visit: (Entry) -> Void) {
        var seen = excluded
        var stack = start(roots, seen: &seen, visit)
        while let dir = stack.popLast() {
            let subdirectories = read(dir, visit)
            // Reverse so that the stack pops them in directory order.
            for (path, id) in subdirectories.reversed() where seen.insert(id).inserted { stack.append(path) }
        }
    }

    /// Visits every regular file under `roots` on `threads` threads that share the directories
    /// still to read, so that the `fstatat` of each file, most of a walk's cost, runs on every
    /// core. `visit` gets entries in runs, from any of the threads and so perhaps from two at
    /// once; a thread's runs start at one entry and double up to `run`, so that whoever consumes
    /// them has work at once. Roots that are files come first, largest first. Returns when every run
    /// has been visited.
    package func walk(_ roots: [String], threads: Int, run: Int, _ visit: @escaping @Sendable ([Entry]) -> Void) {
        var seen = excluded
        var rootEntries: [Entry] = []
        let stack = start(roots, seen: &seen) { rootEntries.append($0) }
        var runs = Runs(longest: run, visit)
        for entry in rootEntries.sorted(by: { Self.size($0) > Self.size($1) }) { runs.add(entry) }
        runs.flush()
        let pending = ConditionLockedState(Pending(stack: stack, seen: seen))
        let helpers = (1..<max(1, threads)).map { _ in startThread { self.drain(pending, run: run, visit) } }
        drain(pending, run: run, visit)
        for helper in helpers { pthread_join(helper, nil) }
    }

    private static func size(_ entry: Entry) -> Int64 {
        if case .file(_, let snapshot?) = entry { Int64(snapshot.size) } else { -1 }
    }

    /// One thread's entries on their way to `visit`, in runs of 1, 2, 4… up to `longest`.
    private struct Runs {
        let longest: Int
        let visit: @Sendable ([Entry]) -> Void
        var entries: [Entry] = []
        var limit = 1

        init(longest: Int, _ visit: @escaping @Sendable ([Entry]) -> Void) {
            self.longest = longest
            self.visit = visit
        }

        mutating func add(_ entry: Entry) {
            entries.append(entry)
            if entries.count >= limit { flush() }
        }

        mutating func flush() {
            guard !entries.isEmpty else { return }
            visit(entries)
            entries.removeAll(keepingCapacity: true)
            limit = min(limit * 2, longest)
        }
    }

    /// The directories no thread has taken yet, how many threads are reading one, and every
    /// directory ever queued.
    private struct Pending {
        var stack: [String]
        var seen: Set<DirectoryID>
        var reading = 0
    }

    /// One thread's part of a parallel walk: takes directories until none are left and no
    /// other thread is reading one (which could still queue more).
    private func drain(_ pending: ConditionLockedState<Pending>, run: Int, _ visit: @escaping @Sendable ([Entry]) -> Void) {
        var runs = Runs(longest: run, visit)
        var done: [(String, DirectoryID)]?
        while true {
            // Hand on what this thread holds before it may wait for another's directories.
            let next: String? = pending.withLock(stepping: { p in
                if let done {
                    p.reading -= 1
                    for (path, id) in done.reversed() where p.seen.insert(id).inserted { p.stack.append(path) }
                }
                done = nil
                if let dir = p.stack.popLast() {
                    p.reading += 1
                    return .done(dir, wake: !p.stack.isEmpty)
                }
                if p.reading == 0 { return .done(nil, wake: true) }
                return runs.entries.isEmpty ? .wait(until: nil) : .done(nil, wake: false)
            })
            guard let dir = next else {
                if runs.entries.isEmpty { return }
                runs.flush()
                continue
            }
            done = read(dir) { runs.add($0) }
        }
    }

    /// Classifies the roots: files and failures are visited, directories returned to be read
    /// (the first root on top).
    private func start(_ roots: [String], seen: inout Set<DirectoryID>, _ visit: (Entry) -> Void) -> [String] {
        var stack: [String] = []
        for root in roots.reversed() {
            switch classify(root, followLink: true) {
            case .directory(let id):
                if seen.insert(id).inserted { stack.append(root) }
            case .file(let snapshot): visit(.file(root, snapshot))
            case .special: visit(.special(root))
            case .failure(let error): visit(.failure(error))
            }
        }
        return stack
    }

    /// Visits the files of one directory and returns its subdirectories in name order, not yet
    /// checked against those seen.
    private func read(_ dir: String, _ visit: (Entry) -> Void) -> [(String, DirectoryID)] {
        guard let handle = opendir(dir) else {
            visit(.failure(FileError(path: dir, reason: .system(operation: "opendir", .current))))
            return []
        }
        defer { closedir(handle) }
        var subdirectories: [(String, DirectoryID)] = []
        let prefix = dir.hasSuffix("/") ? dir : dir + "/"
        while let entry = readdir(handle) {
            if DirectoryEntry.isDotOrDotDot(entry) { continue }
            let name = DirectoryEntry.name(entry)
            let path = prefix + name
            let type = DirectoryEntry.type(entry)
            if type == UInt8(DT_REG) {
                var s = stat()
                let seen = fstatat(dirfd(handle), name, &s, AT_SYMLINK_NOFOLLOW) == 0 && s.st_mode & S_IFMT == S_IFREG
                visit(.file(path, seen ? FileSnapshot(s) : nil))
                continue
            }
            if type == UInt8(DT_LNK) && !followSymbolicLinks {
                // Not followed, but a link to nothing is broken either way: say so.
                var target = stat()
                if stat(path, &target) != 0, case let error = FileError.failure("stat", .current, path: path),
                    error.reason == .danglingSymbolicLink
                {
                    visit(.failure(error))
                }
                continue
            }
            if type != UInt8(DT_DIR) && type != UInt8(DT_LNK) && type != UInt8(DT_UNKNOWN) {
                visit(.special(path))
                continue
            }
            switch classify(path, followLink: followSymbolicLinks) {
            case .directory(let id): subdirectories.append((path, id))
            case .file(let snapshot): visit(.file(path, snapshot))
            case .special: visit(.special(path))
            case .failure(let error): visit(.failure(error))
            }
        }
        return subdirectories.sorted { $0.0 < $1.0 }
    }

    private enum Kind {
        case directory(DirectoryID)
        case file(FileSnapshot)
        case special
        case failure(FileError)
    }

    private func classify(_ path: String, followLink: Bool) -> Kind {
        var s = stat()
        let rc = followLink ? stat(path, &s) : lstat(path, &s)
        if rc != 0 { return .failure(.failure("stat", .current, path: path)) }
        switch s.st_mode & S_IFMT {
        case S_IFDIR: return .directory(DirectoryID(device: UInt64(s.st_dev), inode: UInt64(s.st_ino)))
        case S_IFREG: return .file(FileSnapshot(s))
        default: return .special
        }
    }
}
