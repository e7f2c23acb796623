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

    /// What a stepping call decided: its result (and whether waiters should look again), or
    /// to wait and run again, until woken or until a deadline (``MonotonicClock/nanoseconds()``).
    package enum Step<R> {
        case done(R, wake: Bool)
        case wait(until: UInt64?)
    }

    /// Runs `body` on the value until it is done, waiting between runs as it asks; wakes the
    /// waiters afterwards only when it says so, so a busy caller does not wake them for nothing.
    package func withLock<R>(stepping body: (inout Value) -> Step<R>) -> R {
        lock.lock()
        defer { lock.unlock() }
        while true {
            switch body(&value) {
            case .done(let result, let wake):
                if wake { lock.broadcast() }
                return result
            case .wait(let deadline):
                if let deadline { _ = lock.wait(until: deadline) } else { lock.wait() }
            }
        }
    }
}
