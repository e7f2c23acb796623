import ThumbcacheSync

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
