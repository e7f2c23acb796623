#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls `body`, a system call that returns -1 and sets `errno` on failure, until it does not
/// fail with `EINTR`; returns its result or the errno it failed with.
///
/// Every raw `open`, `read`, `stat` of the package goes through here: a signal (a resize, a
/// profiler's timer, a debugger) must not turn into a failed file.
@inline(__always)
package func retryingInterrupts<T: FixedWidthInteger>(_ body: () -> T) -> Result<T, Errno> {
    while true {
        let r = body()
        if r >= 0 { return .success(r) }
        if errno != EINTR { return .failure(.current) }
    }
}

/// Writes all of `bytes` to `descriptor`, through short writes and interrupts; nil, or the errno
/// of the write that failed (`EIO` for one that wrote nothing).
package func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Errno? {
    var done = 0
    while done < bytes.count {
        switch retryingInterrupts({ write(descriptor, bytes.baseAddress! + done, bytes.count - done) }) {
        case .success(let n) where n > 0: done += n
        case .success: return Errno(rawValue: EIO)
        case .failure(let errno): return errno
        }
    }
    return nil
}

/// Writes `bytes` to the file at `path` (created or truncated) as `cp` writes one, without the
/// fsync Foundation's `Data.write` adds: a process started per file (the plug-in's, a `get`) would
/// pay for it with nothing to show, since its caller reads the file back at once. Nil, or the
/// errno of the open or write that failed.
package func writeFile(_ bytes: [UInt8], to path: String) -> Errno? {
    let descriptor: Int32
    switch retryingInterrupts({ open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }) {
    case .success(let fd): descriptor = fd
    case .failure(let errno): return errno
    }
    defer { close(descriptor) }
    return bytes.withUnsafeBytes { writeFully(descriptor, $0) }
}

/// Fills `buffer` from `descriptor` at `offset`, through short reads and interrupts: the bytes
/// read (fewer than asked only at the end of the file), or the errno of the read that failed.
package func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Result<Int, Errno> {
    var done = 0
    while done < buffer.count {
        switch retryingInterrupts({ pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done)) }) {
        case .success(let n) where n > 0: done += n
        case .success: return .success(done)
        case .failure(let errno): return .failure(errno)
        }
    }
    return .success(done)
}
