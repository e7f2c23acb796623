#if canImport(Glibc)
import Glibc
#endif

/// One file on tmpfs that each input is written to, so that descriptor-based decoders (what a
/// worker runs) see it as they would a real file.
public final class InputFile: Sendable {
    public let descriptor: Int32

    public init() {
        let path = "/dev/shm/thumbcache-fuzz-\(getpid())"
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        unlink(path)
        precondition(descriptor >= 0, "cannot create the fuzz input file")
    }

    /// Replaces the file's contents with `bytes`.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, bytes.baseAddress, bytes.count, 0)
    }
}
