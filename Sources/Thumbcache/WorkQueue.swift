import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A bounded blocking queue between one producer thread and worker threads.
///
/// `push` blocks while the queue is full; `pop` blocks while it is empty and returns nil once
/// ``finish()`` was called and everything was taken.
final class WorkQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var finished = false
    }
    private let state: ConditionLockedState<State>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        state = ConditionLockedState(State())
    }

    func push(_ element: Element) {
        state.withLock(waitingUntil: { $0.items.count - $0.head < self.capacity }) { s in
            if s.head > 1024 && s.head * 2 > s.items.count {
                s.items.removeFirst(s.head)
                s.head = 0
            }
            s.items.append(element)
        }
    }

    func pop() -> Element? {
        state.withLock(waitingUntil: { $0.head < $0.items.count || $0.finished }) { s in
            guard s.head < s.items.count else { return nil }
            defer { s.head += 1 }
            return s.items[s.head]
        }
    }

    func finish() {
        state.withLock { $0.finished = true }
    }
}

/// A value guarded by a mutex, with waits for a condition on it.
///
/// `@unchecked Sendable`: `value` is only touched with `mutex` held.
final class ConditionLockedState<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        changed.deallocate()
    }

    /// Runs `body` on the value; every call wakes waiters afterwards.
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// Waits until `ready` holds, then runs `body`.
    func withLock<R>(waitingUntil ready: (Value) -> Bool, _ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        while !ready(value) { pthread_cond_wait(changed, mutex) }
        return try body(&value)
    }
}
