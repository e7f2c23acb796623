#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheSync

/// The private folder (mode 0700, in /tmp) where `serve` has Hummingbird listen on a Unix socket
/// nothing else is told of (``HitFront`` hands it its connections). A server removes its folder
/// when it stops; one killed outright (SIGKILL, a crash) cannot, so each start also removes the
/// folders this user's dead servers left.
enum PrivateSocketFolder {
    static let prefix = "thumbcache-serve-"
    static let socketName = "http"

    /// A new folder, its socket's path not yet bound.
    static func make() -> String? {
        var template = Array("/tmp/\(prefix)XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) }
    }

    static func remove(_ folder: String) {
        unlink(folder + "/" + socketName)
        rmdir(folder)
    }

    /// Removes this user's folders whose socket nothing listens on, or that never got one, made
    /// at least `age` seconds ago: a server starting now (its folder made, its socket about to
    /// listen) is younger than that, and a live one answers. Looks at `candidates` (every such
    /// folder in /tmp when nil); returns the folders removed.
    @discardableResult
    static func removeStale(olderThan age: Double = 60, candidates: [String]? = nil) -> [String] {
        var removed: [String] = []
        let now = Double(time(nil))
        for folder in candidates ?? all() {
            var st = stat()
            // Only a folder of this user's, as mkdtemp makes them: never follow a link another user put there.
            guard lstat(folder, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == getuid(), st.st_mode & 0o777 == 0o700 else { continue }
            let socket = folder + "/" + socketName
            var socketStat = stat()
            if lstat(socket, &socketStat) == 0 {
                guard socketStat.st_mode & S_IFMT == S_IFSOCK, now - Double(socketStat.st_ctim.tv_sec) >= age, !isListening(socket) else { continue }
            } else if now - Double(st.st_mtim.tv_sec) < age {
                continue
            }
            remove(folder)
            if access(folder, F_OK) != 0 { removed.append(folder) }
        }
        return removed
    }

    /// Every entry in /tmp named as the folders are.
    static func all() -> [String] {
        guard let directory = opendir("/tmp") else { return [] }
        defer { closedir(directory) }
        var found: [String] = []
        while let entry = readdir(directory) {
            let name = DirectoryEntry.name(entry)
            if name.hasPrefix(prefix) { found.append("/tmp/" + name) }
        }
        return found
    }

    /// Whether a server accepts connections on the socket at `path`.
    static func isListening(_ path: String) -> Bool {
        guard UnixSocket.fits(path) else { return true }
        switch UnixSocket.connect(to: path) {
        case .success(let fd):
            close(fd)
            return true
        case .failure(let error):
            // Anything but "refused" (nobody listens) counts as alive: a folder is removed only when sure.
            return error.rawValue != ECONNREFUSED
        }
    }
}
