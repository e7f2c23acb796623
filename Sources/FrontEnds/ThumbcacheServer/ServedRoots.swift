#if canImport(Glibc)
import Glibc
#endif
import Thumbcache

/// The folders a server shows, and the one check every path from a request goes through: no
/// `.` or `..`, inside a root as written, and inside a root once symbolic links are resolved.
package struct ServedRoots: Sendable {
    /// A root as given (absolute, normalized) and as it really is (`realpath`).
    package struct Root: Sendable, Hashable {
        package var given: String
        package var real: String
    }

    package let roots: [Root]

    /// The longest path a request may name (Linux's PATH_MAX).
    static let maximumPathBytes = 4096

    /// - Throws: a description of the first root that is not an existing directory.
    package init(_ paths: [String]) throws(ServeError) {
        var roots: [Root] = []
        for path in paths {
            let given = Self.normalized(path)
            guard given.hasPrefix("/"), let real = FilePaths.real(given) else { throw .notFound("\(path): no such directory") }
            var st = stat()
            guard stat(real, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { throw .badRequest("\(path): not a directory") }
            if !roots.contains(where: { $0.real == real }) { roots.append(Root(given: given, real: real)) }
        }
        guard !roots.isEmpty else { throw .badRequest("no folder to serve") }
        self.roots = roots
    }

    /// The real paths of the roots.
    package var paths: [String] { roots.map(\.real) }

    /// True if `path` (absolute, normalized) is a root or under one, by its text alone.
    package func contains(_ path: String) -> Bool {
        roots.contains { Self.isUnder(path, $0.real) || Self.isUnder(path, $0.given) }
    }

    /// The real path of the file or folder a request names, if it is inside the roots.
    /// - Throws: 400 for a malformed path, 403 for one outside the roots (however it gets there),
    ///   404 for one inside that does not exist.
    package func resolve(_ raw: String) throws(ServeError) -> String {
        guard !raw.isEmpty else { throw .badRequest("path is missing") }
        guard raw.utf8.count <= Self.maximumPathBytes else { throw .badRequest("path is longer than \(Self.maximumPathBytes) bytes") }
        guard !raw.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .badRequest("path has control characters")
        }
        guard raw.hasPrefix("/") else { throw .badRequest("path must be absolute") }
        let components = raw.split(separator: "/")
        guard !components.contains(where: { $0 == ".." || $0 == "." }) else { throw .outsideRoots }
        let path = Self.normalized(raw)
        // Refused by its text before the file system is asked, so nothing outside is even probed.
        guard contains(path) else { throw .outsideRoots }
        guard let real = FilePaths.real(path) else {
            throw errno == EACCES ? ServeError(.forbidden, "permission denied: \(path)") : .notFound("no such file: \(path)")
        }
        guard holds(real: real) else { throw .outsideRoots }
        return real
    }

    /// True if `real` (a path with its symbolic links resolved) is a root's real path or under one.
    func holds(real: String) -> Bool {
        roots.contains { Self.isUnder(real, $0.real) }
    }

    /// The root `path` (a real path) is in, if any.
    package func root(of path: String) -> Root? {
        roots.filter { Self.isUnder(path, $0.real) }.max { $0.real.count < $1.real.count }
    }

    static func isUnder(_ path: String, _ root: String) -> Bool {
        root == "/" || path == root || (path.hasPrefix(root) && path.utf8.dropFirst(root.utf8.count).first == UInt8(ascii: "/"))
    }

    /// `//` collapsed and a trailing `/` dropped; nothing else (`..` is refused, not resolved).
    static func normalized(_ path: String) -> String {
        let parts = path.split(separator: "/")
        return path.hasPrefix("/") ? "/" + parts.joined(separator: "/") : parts.joined(separator: "/")
    }
}
