import CThumbcacheDescriptors
import Glibc
import NIOCore
import Synchronization
import ThumbcacheSync

/// A held thumbnail's bytes in an anonymous in-memory file (memfd), so that a hit is sent with
/// `sendfile`: the socket takes the file's pages instead of a copy of the bytes made for each
/// response, a large part of a hit's kernel time (Docs/PERFORMANCE.md, "Serving").
/// Descriptors are finite: at most ``limit`` files are open at once; other thumbnails stay buffers.
///
/// The descriptor is shared by every event loop sending the file: positioned reads (`sendfile`
/// with an offset, `pread`) need no lock. Each write wraps it in a `NIOFileHandle` of its own,
/// because a handle refuses a second user while one is inside it (`EBUSY`).
final class HeldFile: Sendable {
    let descriptor: Int32
    let size: Int

    /// Below this a copy costs less than the extra system call a file region takes.
    static let minimumSize = 16 << 10
    /// Half the descriptors the process may open beyond 256 kept for sockets, the store and
    /// workers, once the soft limit is raised to the hard one (as Go's runtime does).
    static let limit: Int = {
        let descriptors = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limits = rlimit()
        guard getrlimit(descriptors, &limits) == 0 else { return 0 }
        if limits.rlim_cur < limits.rlim_max {
            let raised = min(limits.rlim_max, 1 << 20)
            var wanted = limits
            wanted.rlim_cur = raised
            if setrlimit(descriptors, &wanted) == 0 { limits.rlim_cur = raised }
        }
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
        guard fd >= 0, body.withUnsafeReadableBytes({ writeFully(fd, $0) }) == nil else {
            if fd >= 0 { close(fd) }
            open.subtract(1, ordering: .relaxed)
            return nil
        }
        return HeldFile(descriptor: fd, size: body.readableBytes)
    }

    private init(descriptor: Int32, size: Int) {
        self.descriptor = descriptor
        self.size = size
    }

    deinit {
        close(descriptor)
        Self.open.subtract(1, ordering: .relaxed)
    }

    /// The whole file as a region for one write, and what to call once that write is done (it
    /// keeps the file open until then, and gives the descriptor back from the region's handle).
    func region() -> (FileRegion, finished: @Sendable () -> Void) {
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
        let finished: @Sendable () -> Void = {
            _ = try? handle.takeDescriptorOwnership()
            withExtendedLifetime(self) {}
        }
        return (FileRegion(fileHandle: handle, readerIndex: 0, endIndex: size), finished)
    }

    /// The bytes read back, for the responses Hummingbird sends (they take buffers).
    func bytes() -> ByteBuffer? {
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { target in
            (try? readFully(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: target[..<size]), at: 0).get()) ?? 0
        }
        return read == size ? buffer : nil
    }
}
