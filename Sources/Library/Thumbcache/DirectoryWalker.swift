import ThumbcacheStore

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
        /// A regular file, with what `fstatat` relative to its directory said of it when the walk
        /// saw it (nil for a root or a followed link): one path lookup less per file.
        case file(String, FileSnapshot?)
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

    /// Visits every regular file under `roots` (a root may itself be a file).
    package func walk(_ roots: [String], _ visit: (Entry) -> Void) {
        var seen = excluded
        var stack: [String] = []
        for root in roots.reversed() {
            switch classify(root, followLink: true) {
            case .directory(let id):
                if seen.insert(id).inserted { stack.append(root) }
            case .file: visit(.file(root, nil))
            case .skip: break
            case .failure(let error): visit(.failure(error))
            }
        }
        while let dir = stack.popLast() {
            guard let handle = opendir(dir) else {
                visit(.failure(FileError(path: dir, reason: .system(operation: "opendir", .current))))
                continue
            }
            var subdirectories: [String] = []
            let prefix = dir.hasSuffix("/") ? dir : dir + "/"
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name == "." || name == ".." { continue }
                let path = prefix + name
                let type = entry.pointee.d_type
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
                if type != UInt8(DT_DIR) && type != UInt8(DT_LNK) && type != UInt8(DT_UNKNOWN) { continue }
                switch classify(path, followLink: followSymbolicLinks) {
                case .directory(let id):
                    if seen.insert(id).inserted { subdirectories.append(path) }
                case .file: visit(.file(path, nil))
                case .skip: break
                case .failure(let error): visit(.failure(error))
                }
            }
            closedir(handle)
            // Reverse so that the stack pops them in directory order.
            stack.append(contentsOf: subdirectories.sorted().reversed())
        }
    }

    private enum Kind {
        case directory(DirectoryID)
        case file
        case skip
        case failure(FileError)
    }

    private func classify(_ path: String, followLink: Bool) -> Kind {
        var s = stat()
        let rc = followLink ? stat(path, &s) : lstat(path, &s)
        if rc != 0 { return .failure(.failure("stat", .current, path: path)) }
        switch s.st_mode & S_IFMT {
        case S_IFDIR: return .directory(DirectoryID(device: UInt64(s.st_dev), inode: UInt64(s.st_ino)))
        case S_IFREG: return .file
        default: return .skip
        }
    }
}
