import CXXHash

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hashes files with XXH3-128, streaming through one reusable buffer.
///
/// Files are read with `read(2)`, not mapped: a file truncated while mapped raises `SIGBUS`,
/// which would kill the process; a read just returns fewer bytes. Memory stays at one buffer
/// whatever the file size.
///
/// A hasher owns its buffer and hash state: use one per thread (it is not `Sendable`).
public final class ContentHasher {
    /// Bytes read per `read(2)`: large enough to amortise the system call, small enough to
    /// stay in the L2 cache between the copy and the hash.
    public static let defaultBufferSize = 256 << 10

    private let buffer: UnsafeMutableRawBufferPointer
    private let state: OpaquePointer

    public init(bufferSize: Int = ContentHasher.defaultBufferSize) {
        buffer = .allocate(byteCount: bufferSize, alignment: 64)
        guard let state = XXH3_createState() else { fatalError("XXH3_createState: out of memory") }
        self.state = state
    }

    deinit {
        buffer.deallocate()
        XXH3_freeState(state)
    }

    /// Hashes the regular file at `path` (symbolic links followed).
    ///
    /// The file is checked before and after reading; if it changed meanwhile, it is read once
    /// more, and if it changed again the error is ``FileError/Reason/changedWhileReading``.
    /// - Returns: the hash and the snapshot the hash belongs to.
    public func hash(fileAt path: String) throws(FileError) -> (hash: ContentHash, snapshot: FileSnapshot) {
        // O_NONBLOCK so that opening a FIFO does not wait for a writer; it does nothing to
        // regular files.
        let fd: Int32
        switch retryingInterrupts({ open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }) {
        case .success(let d): fd = d
        case .failure(let errno):
            var s = stat()
            if errno == .noSuchFileOrDirectory, lstat(path, &s) == 0, FileKind(mode: s.st_mode) == .symbolicLink {
                throw FileError(path: path, reason: .danglingSymbolicLink)
            }
            throw FileError(path: path, reason: .system(operation: "open", errno))
        }
        defer { close(fd) }
        for attempt in 0..<2 {
            if let result = try hashOnce(fd: fd, path: path) { return result }
            if attempt == 0, lseek(fd, 0, SEEK_SET) != 0 {
                throw FileError(path: path, reason: .system(operation: "lseek", .current))
            }
        }
        throw FileError(path: path, reason: .changedWhileReading)
    }

    /// One pass over the file; nil if it changed while being read.
    private func hashOnce(fd: Int32, path: String) throws(FileError) -> (hash: ContentHash, snapshot: FileSnapshot)? {
        let before = try FileSnapshot.of(descriptor: fd, path: path)
        guard before.kind == .regular else { throw FileError(path: path, reason: .notRegularFile(before.kind)) }
        if before.size > UInt64(buffer.count) {
            _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        }
        XXH3_128bits_reset(state)
        var total: UInt64 = 0
        let base = buffer.baseAddress!
        while true {
            let n: Int
            switch retryingInterrupts({ read(fd, base, buffer.count) }) {
            case .success(let count): n = count
            case .failure(let errno): throw FileError(path: path, reason: .system(operation: "read", errno))
            }
            if n == 0 { break }
            XXH3_128bits_update(state, base, n)
            total += UInt64(n)
        }
        let after = try FileSnapshot.of(descriptor: fd, path: path)
        guard total == before.size, after.sameContentAs(before) else { return nil }
        return (ContentHash(XXH3_128bits_digest(state)), after)
    }
}
