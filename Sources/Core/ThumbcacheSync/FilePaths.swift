#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Paths as the cache and the index key files: absolute, without `.`, `..` or symbolic links.
package enum FilePaths {
    /// `path` resolved to an absolute path without `.`, `..` or symbolic links, if it exists;
    /// else `path` as it is (so a per-file error can name what the user typed).
    package static func resolved(_ path: String) -> String {
        real(path) ?? path
    }

    /// `realpath(3)`: `path` without `.`, `..` or symbolic links, or nil (with `errno` set) if it
    /// does not resolve.
    package static func real(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A non-empty environment variable.
    package static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    /// The user's home directory: $HOME, else the password database's, else /tmp.
    package static var home: String {
        if let home = environment("HOME") { return home }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/tmp"
    }

    /// $XDG_CACHE_HOME, else ~/.cache (the XDG spec says to ignore a relative value).
    package static var cacheHome: String {
        if let xdg = environment("XDG_CACHE_HOME"), xdg.hasPrefix("/") { return xdg }
        return home + "/.cache"
    }

    /// $XDG_DATA_HOME, else ~/.local/share.
    package static var dataHome: String {
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg }
        return home + "/.local/share"
    }

    /// $XDG_DATA_DIRS (absolute entries), else /usr/local/share and /usr/share.
    package static var dataDirectories: [String] {
        let dirs = (environment("XDG_DATA_DIRS") ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return dirs.isEmpty ? ["/usr/local/share", "/usr/share"] : dirs
    }

    /// Whether `path` names a directory (through symbolic links).
    package static func isDirectory(_ path: String) -> Bool {
        var s = stat()
        return stat(path, &s) == 0 && s.st_mode & S_IFMT == S_IFDIR
    }

    /// `path` without its last component, as NSString's `deletingLastPathComponent` says it:
    /// "/a/b/c" → "/a/b", "/a" → "/", "name" → "", trailing slashes ignored.
    package static func parent(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        if slash == p.startIndex { return "/" }
        var head = p[..<slash]
        while head.count > 1, head.hasSuffix("/") { head = head.dropLast() }
        return String(head)
    }

    /// The extension of `path`'s last component (what follows its last `.`, if that is not its
    /// first character), or "".
    package static func pathExtension(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// `path` without its last component's extension (and its dot).
    package static func deletingExtension(_ path: String) -> String {
        let ext = pathExtension(path)
        return ext.isEmpty ? path : String(path.dropLast(ext.count + 1))
    }

    /// The last component of `path` (what follows its last `/`), without splitting the whole path:
    /// it runs for every file a warm walks.
    package static func lastComponent(_ path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }
}
