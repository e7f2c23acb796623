#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable whose timed waits use the monotonic clock.
///
/// `@unchecked Sendable`: pthread mutexes and conditions exist to be shared between threads;
/// both are allocated once and never reassigned.
package final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
    private let condition: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)

    package init() {
        precondition(pthread_mutex_init(mutex, nil) == 0)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(condition, &attr) == 0)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
    package func broadcast() { pthread_cond_broadcast(condition) }
    /// Waits for a broadcast; call with the lock held.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits for a broadcast until `deadline` (``MonotonicClock/nanoseconds()``); false when it passed.
    package func wait(until deadline: UInt64) -> Bool {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &ts) == 0
    }

    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
