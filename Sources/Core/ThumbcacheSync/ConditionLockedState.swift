/// A value guarded by a ``ConditionLock``, with waits for a condition on it.
///
/// `@unchecked Sendable`: `value` is only touched with the lock held.
package final class ConditionLockedState<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = ConditionLock()

    package init(_ value: Value) { self.value = value }

    /// Runs `body` on the value; every call wakes waiters afterwards.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer {
            lock.broadcast()
            lock.unlock()
        }
        return try body(&value)
    }

    /// Waits until `ready` holds, then runs `body`.
    package func withLock<R>(waitingUntil ready: (Value) -> Bool, _ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer {
            lock.broadcast()
            lock.unlock()
        }
        while !ready(value) { lock.wait() }
        return try body(&value)
    }

    /// Waits until `ready` holds or `deadline` (``MonotonicClock/nanoseconds()``) passes, then runs `body`.
    package func withLock<R>(waitingUntil ready: (Value) -> Bool, deadline: UInt64, _ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer {
            lock.broadcast()
            lock.unlock()
        }
        while !ready(value) && lock.wait(until: deadline) {}
        return try body(&value)
    }
}
