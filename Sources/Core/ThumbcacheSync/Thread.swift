import CThumbcacheProcess
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a joinable OS thread running `body`. `beside`: a thread that works beside this one
/// for a short while (a decode's second half, its downscaling) may not use this thread's CPU,
/// where there is another: Linux put a new thread on its creator's CPU, where the two took turns
/// for the first milliseconds, the whole of a one-file decode, while another CPU stood idle.
package func startThread(beside: Bool = false, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let run: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { arg in
        Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue().body()
        return nil
    }
    let rc = beside ? tc_start_thread_beside(&thread, run, box) : pthread_create(&thread, nil, run, box)
    precondition(rc == 0, "pthread_create failed: \(rc)")
    return thread
}

/// Starts an OS thread running `body` that no one joins (its resources go when it ends).
package func detachThread(_ body: @escaping @Sendable () -> Void) {
    pthread_detach(startThread(body))
}

/// Blocks the calling thread for `seconds` (resumed after a signal's interruption).
package func sleepThread(seconds: Double) {
    guard seconds > 0 else { return }
    var left = timespec(tv_sec: Int(seconds.rounded(.down)), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var rest = timespec()
    while nanosleep(&left, &rest) == -1 && errno == EINTR { left = rest }
}
