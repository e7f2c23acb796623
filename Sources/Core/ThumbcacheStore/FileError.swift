#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ThumbcacheSync

/// What kind of file system object a path names.
public enum FileKind: String, Sendable, Hashable {
    case regular = "regular file"
    case directory
    case symbolicLink = "symbolic link"
    case fifo = "FIFO"
    case socket
    case characterDevice = "character device"
    case blockDevice = "block device"
    case unknown = "unknown file type"

    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        default: self = .unknown
        }
    }
}

/// A file could not be used: which file, and why.
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// A system call failed.
        case system(operation: String, Errno)
        /// The path is not a regular file (a directory, a FIFO, a device…).
        case notRegularFile(FileKind)
        /// The path is a symbolic link whose target does not exist.
        case danglingSymbolicLink
        /// Size, modification or change time differed before and after reading, twice in a row.
        case changedWhileReading

        public var description: String {
            switch self {
            case .system(let operation, let errno): "\(operation) failed: \(errno)"
            case .notRegularFile(let kind): "not a regular file (\(kind.rawValue))"
            case .danglingSymbolicLink: "dangling symbolic link (its target does not exist)"
            case .changedWhileReading: "changed while reading"
            }
        }
    }

    public var path: String
    public var reason: Reason

    package init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

extension FileError {
    /// The error for `operation` failing with `errno` on `path`. A path that is a symbolic link to
    /// nothing (`ENOENT`, yet `lstat` finds a link) is reported as a dangling link.
    package static func failure(_ operation: String, _ errno: Errno, path: String) -> FileError {
        var s = stat()
        if errno == .noSuchFileOrDirectory, lstat(path, &s) == 0, FileKind(mode: s.st_mode) == .symbolicLink {
            return FileError(path: path, reason: .danglingSymbolicLink)
        }
        return FileError(path: path, reason: .system(operation: operation, errno))
    }
}
