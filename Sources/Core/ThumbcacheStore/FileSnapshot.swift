#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ThumbcacheSync

/// What `stat` says of a file: enough to tell whether its bytes may have changed.
package struct FileSnapshot: Sendable, Hashable {
    package var device: UInt64
    package var inode: UInt64
    package var size: UInt64
    /// Modification time, nanoseconds since 1970.
    package var modificationTime: Int64
    /// Status change time, nanoseconds since 1970 (changes on every write, rename or chmod).
    package var changeTime: Int64
    package var kind: FileKind

    package init(device: UInt64, inode: UInt64, size: UInt64, modificationTime: Int64, changeTime: Int64, kind: FileKind) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.kind = kind
    }

    package init(_ s: stat) {
        device = UInt64(s.st_dev)
        inode = UInt64(s.st_ino)
        size = UInt64(s.st_size)
        modificationTime = Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec)
        changeTime = Int64(s.st_ctim.tv_sec) * 1_000_000_000 + Int64(s.st_ctim.tv_nsec)
        kind = FileKind(mode: s.st_mode)
    }

    /// `stat` of `path`, following symbolic links. A dangling link is reported as such.
    package static func of(path: String) throws(FileError) -> FileSnapshot {
        var s = stat()
        if case .failure(let errno) = retryingInterrupts({ stat(path, &s) }) {
            throw .failure("stat", errno, path: path)
        }
        return FileSnapshot(s)
    }

    /// `fstat` of an open descriptor.
    static func of(descriptor fd: Int32, path: String) throws(FileError) -> FileSnapshot {
        var s = stat()
        if case .failure(let errno) = retryingInterrupts({ fstat(fd, &s) }) {
            throw FileError(path: path, reason: .system(operation: "fstat", errno))
        }
        return FileSnapshot(s)
    }

    /// The modification time in whole seconds (rounded down, before 1970 too), as `st_mtime` says it.
    package var modificationSeconds: Int64 {
        modificationTime >= 0 ? modificationTime / 1_000_000_000 : (modificationTime + 1) / 1_000_000_000 - 1
    }

    /// True if the file's bytes can be assumed unchanged between the two snapshots.
    package func sameContentAs(_ other: FileSnapshot) -> Bool {
        device == other.device && inode == other.inode && size == other.size
            && modificationTime == other.modificationTime && changeTime == other.changeTime
    }
}
