import Synchronization
import ThumbcacheSync

/// Batches of work from one producer thread to worker threads, which give back half of what is
/// left of their batch when another worker has nothing to do. Batches keep hand-offs rare on a
/// re-warm of a million unchanged files; giving back keeps every worker busy on a folder of a
/// few slow files, which would otherwise all land in one batch on one worker.
///
/// A worker loops: ``take()`` a batch, before each item ``share(_:)`` the rest (or not: then it
/// is a plain queue of batches), then ``done()``. `push` blocks while the queue is full.
final class SharedWork<Item: Sendable>: Sendable {
    private struct State {
        var batches: [[Item]] = []
        var head = 0
        var finished = false
        /// Workers holding a batch they have not finished: they may still give part of it back.
        var holding = 0

        var queued: Int { batches.count - head }

        mutating func next() -> [Item]? {
            guard head < batches.count else { return nil }
            defer {
                head += 1
                holding += 1
            }
            return batches[head]
        }
    }
    private let state = ConditionLockedState(State())
    /// Workers waiting for a batch, read without the lock after every item.
    private let waiting = Atomic<Int>(0)
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func push(_ batch: [Item]) {
        state.withLock(waitingUntil: { $0.queued < self.capacity }) { s in
            if s.head > 1024 && s.head * 2 > s.batches.count {
                s.batches.removeFirst(s.head)
                s.head = 0
            }
            s.batches.append(batch)
        }
    }

    /// No more batches will be pushed.
    func finish() {
        state.withLock { $0.finished = true }
    }

    /// The next batch; nil once the producer finished and no worker holds anything to give back.
    func take() -> [Item]? {
        if let batch = state.withLock({ $0.next() }) { return batch }
        waiting.add(1, ordering: .relaxed)
        defer { waiting.subtract(1, ordering: .relaxed) }
        return state.withLock(waitingUntil: { $0.queued > 0 || ($0.finished && $0.holding == 0) }) { $0.next() }
    }

    /// Gives the latter half of `rest` back if a worker is waiting for work.
    func share(_ rest: inout ArraySlice<Item>) {
        guard rest.count > 1, waiting.load(ordering: .relaxed) > 0 else { return }
        let given = Array(rest.suffix(rest.count / 2))
        rest.removeLast(given.count)
        // Never waits for room: a worker waits only when the queue is empty.
        state.withLock { $0.batches.append(given) }
    }

    /// Workers waiting in ``take()`` now.
    var waitingWorkers: Int { waiting.load(ordering: .relaxed) }

    /// The batch taken last is finished.
    func done() {
        state.withLock { $0.holding -= 1 }
    }
}
