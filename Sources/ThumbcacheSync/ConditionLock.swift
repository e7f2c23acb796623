#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// A mutex with a condition variable whose timed waits use the monotonic clock.
///
/// `@unchecked Sendable`: pthread mutexes and conditions exist to be shared between threads;
/// both are allocated once and never reassigned.
public final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
    private let condition: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)

    public init() {
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

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    public func broadcast() { pthread_cond_broadcast(condition) }
    /// Waits for a broadcast; call with the lock held.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits for a broadcast until `deadline` (``MonotonicClock/nanoseconds()``); false when it passed.
    public func wait(until deadline: UInt64) -> Bool {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &ts) == 0
    }

    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Starts a joinable OS thread running `body`.
public func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { arg in
        Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue().body()
        return nil
    }, box)
    precondition(rc == 0, "pthread_create failed: \(rc)")
    return thread
}

/// The monotonic clock, for intervals and deadlines (``ConditionLock`` waits on it).
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The same clock at a few milliseconds' resolution, cheaper to read on hot paths.
    public static func coarseNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

/// A value guarded by a ``ConditionLock``, with waits for a condition on it.
///
/// `@unchecked Sendable`: `value` is only touched with the lock held.
public final class ConditionLockedState<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = ConditionLock()

    public init(_ value: Value) { self.value = value }

    /// Runs `body` on the value; every call wakes waiters afterwards.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer {
            lock.broadcast()
            lock.unlock()
        }
        return try body(&value)
    }

    /// Waits until `ready` holds, then runs `body`.
    public func withLock<R>(waitingUntil ready: (Value) -> Bool, _ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer {
            lock.broadcast()
            lock.unlock()
        }
        while !ready(value) { lock.wait() }
        return try body(&value)
    }
}

/// Work started on a helper thread now, whose answer the starting thread takes later.
public final class HelperWork<T: Sendable>: Sendable {
    private let answer = ConditionLockedState<Result<T, any Error>?>(nil)

    public init(_ body: @escaping @Sendable () throws -> T) {
        DispatchQueue.global(qos: .userInitiated).async { [answer] in
            let result = Result(catching: body)
            answer.withLock { $0 = result }
        }
    }

    /// Waits for the answer. Take it exactly once, also when giving up on it: the work may be
    /// using something the caller is about to end (a transaction, say).
    public func result() throws -> T {
        try answer.withLock(waitingUntil: { if case .some = $0 { true } else { false } }) { $0.take()! }.get()
    }
}
