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
