import CThumbcacheXXHash
import ThumbcacheSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hashes files with XXH3-128.
///
/// Files up to `mapThreshold` are read with `read(2)` into one reusable buffer. Larger files
/// are mapped in windows of 8 MiB (`MAP_POPULATE`, so no page faults) and hashed
/// in place, which skips the copy `read` makes (half the time in the page cache; figures in
/// Docs/PERFORMANCE.md). A file truncated while mapped raises `SIGBUS`; the C shim catches it for the
/// hashing thread and the file counts as changed while reading. Memory stays bounded: one
/// buffer, or one window mapped at a time.
///
/// Files above ``Keying/standard``'s threshold (64 MiB) are keyed by samples instead: the size,
/// the first and last MiB and 64 evenly spaced 64 KiB pieces, 6 MiB read whatever the size
/// (Docs/FORMAT.md, "Sampled keys", has the layout and the collision analysis).
///
/// A hasher owns its buffer and hash state: use one per thread (it is not `Sendable`).
public final class ContentHasher {
    /// Which bytes of a file make its key.
    public enum Keying: Sendable, Hashable {
        /// Every byte of every file.
        case full
        /// Every byte of files up to `threshold` bytes; above it, samples (a distinct message,
        /// so a sampled key never stands for a fully hashed file's bytes).
        case sampled(above: UInt64)

        /// Files above 64 MiB are sampled: a video is keyed by 6 MiB of it, not gigabytes.
        public static let standard = Keying.sampled(above: 64 << 20)
    }

    /// The sampled key's message starts with this, then the size (u64 LE), then the pieces.
    static let sampledDomain = Array("thumbcache sampled key v1\0".utf8)
    /// Bytes at each end, the number of pieces between and each piece's length.
    static let sampledEnd = 1 << 20
    static let sampledPieces = 64
    static let sampledPiece = 64 << 10

    /// Bytes read per `read(2)`: large enough to amortise the system call, small enough to
    /// stay in the L2 cache between the copy and the hash.
    package static let defaultBufferSize = 256 << 10
    /// Files larger than this are mapped rather than read.
    package static let mapThreshold = 256 << 10
    /// Bytes mapped at a time, which bounds the resident memory a large file adds.
    package static let mapWindow = 8 << 20

    private let buffer: UnsafeMutableRawBufferPointer
    private let state: OpaquePointer
    private let mapThreshold: Int
    package let keying: Keying

    /// - Parameters:
    ///   - bufferSize: bytes per `read(2)`.
    ///   - mapThreshold: files larger than this are mapped; `Int.max` reads every file.
    ///   - keying: which bytes make a file's key.
    package init(bufferSize: Int = ContentHasher.defaultBufferSize, mapThreshold: Int = ContentHasher.mapThreshold,
                keying: Keying = .standard) {
        buffer = .allocate(byteCount: max(bufferSize, Self.sampledPiece), alignment: 64)
        guard let state = cxxh_create() else { fatalError("cxxh_create: out of memory") }
        self.state = state
        self.mapThreshold = mapThreshold
        self.keying = keying
    }

    deinit {
        buffer.deallocate()
        cxxh_free(state)
    }

    /// Hashes the regular file at `path` (symbolic links followed).
    ///
    /// The file is checked before and after reading; if it changed meanwhile, it is read once
    /// more, and if it changed again the error is ``FileError/Reason/changedWhileReading``.
    /// - Returns: the hash and the snapshot the hash belongs to.
    package func hash(fileAt path: String) throws(FileError) -> (hash: ContentHash, snapshot: FileSnapshot) {
        // O_NONBLOCK so that opening a FIFO does not wait for a writer; it does nothing to
        // regular files.
        let fd: Int32
        switch retryingInterrupts({ open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }) {
        case .success(let d): fd = d
        case .failure(let errno):
            throw .failure("open", errno, path: path)
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
        cxxh_reset(state)
        let complete: Bool
        if case .sampled(let threshold) = keying, before.size > threshold,
           before.size >= UInt64(2 * Self.sampledEnd + Self.sampledPieces * Self.sampledPiece) {
            complete = try hashSamples(fd: fd, path: path, size: Int(before.size))
        } else if before.size > UInt64(mapThreshold), let mapped = try hashMapped(fd: fd, path: path, size: Int(before.size)) {
            complete = mapped
        } else {
            complete = try hashRead(fd: fd, path: path, size: before.size)
        }
        let after = try FileSnapshot.of(descriptor: fd, path: path)
        guard complete, after.sameContentAs(before) else { return nil }
        var hash = ContentHash(high: 0, low: 0)
        cxxh_digest(state, &hash.high, &hash.low)
        return (hash, after)
    }

    /// Reads the file to its end; false if the byte count differs from `size`.
    private func hashRead(fd: Int32, path: String, size: UInt64) throws(FileError) -> Bool {
        if lseek(fd, 0, SEEK_SET) != 0 { throw FileError(path: path, reason: .system(operation: "lseek", .current)) }
        if size > UInt64(buffer.count) { _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL)) }
        var total: UInt64 = 0
        let base = buffer.baseAddress!
        while true {
            let n: Int
            switch retryingInterrupts({ read(fd, base, buffer.count) }) {
            case .success(let count): n = count
            case .failure(let errno): throw FileError(path: path, reason: .system(operation: "read", errno))
            }
            if n == 0 { break }
            cxxh_update(state, base, n)
            total += UInt64(n)
        }
        return total == size
    }

    /// The sampled key's message: domain ‖ size ‖ first MiB ‖ 64 pieces of 64 KiB evenly spaced
    /// between the ends ‖ last MiB, read with `pread` (never mapped: nothing stays resident). False
    /// if the file ended early.
    private func hashSamples(fd: Int32, path: String, size: Int) throws(FileError) -> Bool {
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_RANDOM))  // no read-ahead beyond the pieces
        Self.sampledDomain.withUnsafeBytes { cxxh_update(state, $0.baseAddress, $0.count) }
        withUnsafeBytes(of: UInt64(size).littleEndian) { cxxh_update(state, $0.baseAddress, $0.count) }
        let end = Self.sampledEnd, piece = Self.sampledPiece, pieces = Self.sampledPieces
        // The middle runs from the end of the first MiB to the start of the last one.
        let span = size - 2 * end - piece
        var ranges = [(offset: 0, length: end)]
        for i in 0..<pieces { ranges.append((end + span * i / (pieces - 1), piece)) }
        ranges.append((size - end, end))
        let base = buffer.baseAddress!
        for range in ranges {
            var done = 0
            while done < range.length {
                let want = min(buffer.count, range.length - done)
                let n: Int
                switch retryingInterrupts({ pread(fd, base, want, off_t(range.offset + done)) }) {
                case .success(let count): n = count
                case .failure(let errno): throw FileError(path: path, reason: .system(operation: "read", errno))
                }
                if n == 0 { return false }
                cxxh_update(state, base, n)
                done += n
            }
        }
        return true
    }

    /// Hashes the file through mappings of at most `mapWindow` bytes. Returns nil if the file
    /// cannot be mapped at all (some file systems), false if it shrank while being hashed.
    private func hashMapped(fd: Int32, path: String, size: Int) throws(FileError) -> Bool? {
        var offset = 0
        while offset < size {
            let length = min(Self.mapWindow, size - offset)
            guard let map = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(offset)),
                map != MAP_FAILED
            else {
                if offset == 0 { return nil }
                throw FileError(path: path, reason: .system(operation: "mmap", .current))
            }
            let rc = cxxh_update_mapped(state, map, length)
            munmap(map, length)
            if rc != 0 { return false }
            offset += length
        }
        return true
    }
}
