import CDescriptors
import Glibc
import NIOCore
import Synchronization

/// A held thumbnail's bytes in an anonymous in-memory file (memfd), so that a hit is sent with
/// `sendfile`: the socket takes the file's pages instead of a copy of the bytes made for each
/// response, which was a third of a hit's kernel time (Docs/PERFORMANCE.md, "Serving").
/// Descriptors are finite: at most ``limit`` files are open at once; other thumbnails stay buffers.
final class HeldFile: Sendable {
    let handle: NIOFileHandle
    let size: Int

    /// Below this a copy costs less than the extra system call a file region takes.
    static let minimumSize = 16 << 10
    /// Half the descriptors the process may open beyond 256 kept for sockets, the store and workers.
    static let limit: Int = {
        var limits = rlimit()
        guard getrlimit(descriptors, &limits) == 0 else { return 0 }
        return max(0, (Int(clamping: limits.rlim_cur) - 256) / 2)
    }()
    private static let open = Atomic<Int>(0)

    /// The file holding `body`'s bytes, or nil when it is small, the limit is reached or the
    /// file cannot be made (the caller keeps the buffer).
    static func make(_ body: ByteBuffer) -> HeldFile? {
        guard body.readableBytes >= minimumSize else { return nil }
        guard open.add(1, ordering: .relaxed).newValue <= limit else {
            open.subtract(1, ordering: .relaxed)
            return nil
        }
        let fd = cdesc_memfd("thumbcache-thumbnail")
        let written = fd >= 0 && body.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
        guard written else {
            if fd >= 0 { Glibc.close(fd) }
            open.subtract(1, ordering: .relaxed)
            return nil
        }
        return HeldFile(NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: fd), size: body.readableBytes)
    }

    private init(_ handle: NIOFileHandle, size: Int) {
        self.handle = handle
        self.size = size
    }

    deinit {
        try? handle.close()
        Self.open.subtract(1, ordering: .relaxed)
    }

    /// The bytes read back, for the responses Hummingbird sends (they take buffers).
    func bytes() -> ByteBuffer? {
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        let read = try? handle.withUnsafeFileDescriptor { fd in
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { target in
                var offset = 0
                while offset < size {
                    let n = pread(fd, target.baseAddress! + offset, size - offset, off_t(offset))
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    offset += n
                }
                return offset
            }
        }
        return read == size ? buffer : nil
    }

    /// Raises the soft limit on open descriptors to the hard one (as Go's runtime does), so that
    /// more thumbnails can be held as files; call before the first ``make``.
    static func raiseDescriptorLimit() {
        var limits = rlimit()
        guard getrlimit(descriptors, &limits) == 0, limits.rlim_cur < limits.rlim_max else { return }
        limits.rlim_cur = min(limits.rlim_max, 1 << 20)
        _ = setrlimit(descriptors, &limits)
    }

    private static let descriptors = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
