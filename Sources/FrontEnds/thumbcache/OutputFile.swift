import ThumbcacheSync
#if canImport(Glibc)
import Glibc
#endif

/// A result file written as `cp` writes one: without the fsync Foundation's `Data.write` adds,
/// which a process started per file (the plug-in's, a `get`) pays for with nothing to show: its
/// caller reads the file back at once.
enum OutputFile {
    static func write(_ bytes: [UInt8], to path: String) throws {
        let descriptor: Int32
        switch retryingInterrupts({ open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }) {
        case .success(let fd): descriptor = fd
        case .failure(let errno): throw CommandFailure("cannot write \(path): \(errno)")
        }
        defer { close(descriptor) }
        if let errno = bytes.withUnsafeBytes({ writeFully(descriptor, $0) }) { throw CommandFailure("cannot write \(path): \(errno)") }
    }
}
