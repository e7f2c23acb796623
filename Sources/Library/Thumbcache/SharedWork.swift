import ThumbcacheSync

/// Work from one producer thread to worker threads, pushed in batches and taken one item at a
/// time. A worker takes from the batch it holds; with nothing left it takes the next batch, else
/// half of what another worker holds and has not started, at once, even while that worker is in
/// the middle of a slow file. Batches keep the queue's hand-offs rare on a re-warm of a million
/// unchanged files; taking from a busy worker keeps every core on a folder of a few slow files,
/// which otherwise waited behind the one being decoded (Docs/PERFORMANCE.md).
///
/// Each worker calls ``next(for:)`` with its own index until it returns nil; ``push(_:)`` blocks
/// while the queue is full.
final class SharedWork<Item: Sendable>: Sendable {
    private struct State {
        var batches: [[Item]] = []
        var head = 0
        var finished = false
        /// What each worker holds and has not started.
        var held: [ArraySlice<Item>]
        var queued: Int { batches.count - head }
        var anyHeld: Bool { held.contains { !$0.isEmpty } }

        mutating func next(for worker: Int) -> Item? {
            if let item = held[worker].popFirst() { return item }
            while head < batches.count {
                held[worker] = batches[head][...]
                batches[head] = []
                head += 1
                if let item = held[worker].popFirst() { return item }
            }
            // The latter half (rounded up) of the largest holding: its holder goes on from the front.
            guard let other = held.indices.max(by: { held[$0].count < held[$1].count }), !held[other].isEmpty else { return nil }
            let count = (held[other].count + 1) / 2
            held[worker] = held[other].suffix(count)
            held[other].removeLast(count)
            return held[worker].popFirst()
        }
    }

    private let state: ConditionLockedState<State>
    private let capacity: Int

    /// A queue of at most `capacity` batches for `workers` workers, numbered from 0.
    init(capacity: Int, workers: Int) {
        self.capacity = capacity
        state = ConditionLockedState(State(held: Array(repeating: [], count: max(1, workers))))
    }

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

    /// Worker `worker`'s next item; nil once the producer finished and nothing is queued or held.
    func next(for worker: Int) -> Item? {
        state.withLock(waitingUntil: { $0.queued > 0 || $0.anyHeld || $0.finished }) { $0.next(for: worker) }
    }

    /// Worker `worker`'s next items, at most `count`: the first as ``next(for:)`` finds it, the
    /// rest from what the worker then holds (never taken from another). Empty once all is done.
    func next(for worker: Int, upTo count: Int) -> [Item] {
        state.withLock(waitingUntil: { $0.queued > 0 || $0.anyHeld || $0.finished }) { s in
            guard let first = s.next(for: worker) else { return [] }
            var items = [first]
            while items.count < count, let more = s.held[worker].popFirst() { items.append(more) }
            return items
        }
    }
}
