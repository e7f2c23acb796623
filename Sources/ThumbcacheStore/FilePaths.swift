#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Paths as the cache and the index key files: absolute, without `.`, `..` or symbolic links.
public enum FilePaths {
    /// `path` resolved to an absolute path without `.`, `..` or symbolic links, if it exists;
    /// else `path` as it is (so a per-file error can name what the user typed).
    public static func resolved(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
