import ThumbcacheSync

/// Work from one producer thread to worker threads, pushed in batches and taken a few items at
/// a time. A worker takes from the batch it holds; with nothing left it takes the next batch, else
/// half of what another worker holds and has not started, once that worker has been on what it
/// took for ``stealAfter`` (a slow file). A worker whose items go quickly takes more at once (up
/// to ``maxChunk`` items of ``maxChunkBytes`` in all, by the items' sizes), one that meets a slow
/// one, or starts a new batch, goes back to one at a time: what it has taken cannot be taken
/// from it, and a new file among quick ones may be slow.
///
/// Batches keep the queue's hand-offs rare on a re-warm of a million unchanged files; taking from
/// a worker stuck in a slow file keeps every core on a folder of a few slow files, which otherwise
/// waited behind the one being decoded; and chunks of quick items, never split while they go
/// quickly, keep the workers from taking one lock for every unchanged file (Docs/PERFORMANCE.md).
///
/// Each worker calls ``take(for:)`` (or ``next(for:)``) with its own index until it gets nothing;
/// ``push(_:)`` blocks while the queue is full.
final class SharedWork<Item: Sendable>: Sendable {
    /// Items quicker than this each are taken several at a time.
    static var quickItem: UInt64 { 50_000 }
    static var maxChunk: Int { 64 }
    static var maxChunkBytes: UInt64 { 1 << 20 }

    private struct State {
        var batches: [[Item]] = []
        var head = 0
        var finished = false
        /// What each worker holds and has not started.
        var held: [ArraySlice<Item>]
        /// When each worker took what it is on (``MonotonicClock``; 0 between takes), how many
        /// items that was, and how many it takes at once.
        var started: [UInt64]
        var handed: [Int]
        var chunk: [Int]
        var queued: Int { batches.count - head }

        mutating func take(for worker: Int, upTo limit: Int, now: UInt64, stealAfter: UInt64, capacity: Int, size: (Item) -> UInt64)
            -> ConditionLockedState<State>.Step<[Item]>
        {
            if started[worker] != 0 {
                let each = (now &- started[worker]) / UInt64(max(1, handed[worker]))
                chunk[worker] = each < SharedWork.quickItem ? min(chunk[worker] * 2, SharedWork.maxChunk) : 1
                started[worker] = 0
            }
            var wake = false
            if held[worker].isEmpty {
                wake = queued >= capacity  // the producer may be waiting for room
                while head < batches.count && held[worker].isEmpty {
                    held[worker] = batches[head][...]
                    batches[head] = []
                    head += 1
                    chunk[worker] = 1
                }
            }
            if held[worker].isEmpty {
                // The largest holding of a worker stuck on what it took; else wait until the first could be.
                var stuck: Int?
                var deadline: UInt64?
                for other in held.indices where !held[other].isEmpty {
                    let since = started[other] == 0 ? now : started[other]
                    if now &- since >= stealAfter {
                        if stuck.map({ held[other].count > held[$0].count }) ?? true { stuck = other }
                    } else {
                        deadline = min(deadline ?? .max, since + stealAfter)
                    }
                }
                guard let other = stuck else {
                    if deadline == nil && finished { return .done([], wake: false) }
                    return .wait(until: deadline)  // nil: nothing held; until a push or the finish
                }
                // The latter half (rounded up): its holder goes on from the front.
                let count = (held[other].count + 1) / 2
                held[worker] = held[other].suffix(count)
                held[other].removeLast(count)
                chunk[worker] = 1
            }
            var items = [held[worker].removeFirst()]
            var bytes = size(items[0])
            while items.count < min(limit, chunk[worker]), let item = held[worker].first, bytes + size(item) <= SharedWork.maxChunkBytes {
                bytes += size(item)
                items.append(held[worker].removeFirst())
            }
            started[worker] = now
            handed[worker] = items.count
            // Once nothing is left anywhere, the waiting workers may stop.
            return .done(items, wake: wake || finished && head == batches.count && held.allSatisfy(\.isEmpty))
        }
    }

    private let state: ConditionLockedState<State>
    private let capacity: Int
    /// How long a worker is on what it took before another may take what it holds.
    let stealAfter: UInt64
    /// An item's size in bytes (a file's), for the bytes of a chunk.
    let size: @Sendable (Item) -> UInt64

    /// A queue of at most `capacity` batches for `workers` workers, numbered from 0.
    init(capacity: Int, workers: Int, stealAfter: UInt64 = 1_000_000, size: @escaping @Sendable (Item) -> UInt64 = { _ in 0 }) {
        self.capacity = capacity
        self.stealAfter = stealAfter
        self.size = size
        let n = max(1, workers)
        state = ConditionLockedState(State(held: Array(repeating: [], count: n), started: Array(repeating: 0, count: n),
                                           handed: Array(repeating: 0, count: n), chunk: Array(repeating: 1, count: n)))
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

    /// Worker `worker`'s next items: one, or more while its items go quickly. Empty once the
    /// producer finished and nothing is queued or held.
    func take(for worker: Int) -> [Item] {
        state.withLock { s in s.take(for: worker, upTo: .max, now: MonotonicClock.nanoseconds(), stealAfter: stealAfter, capacity: capacity, size: size) }
    }

    /// Worker `worker`'s next item; nil once the producer finished and nothing is queued or held.
    func next(for worker: Int) -> Item? {
        state.withLock { s in s.take(for: worker, upTo: 1, now: MonotonicClock.nanoseconds(), stealAfter: stealAfter, capacity: capacity, size: size) }.first
    }

    /// Worker `worker`'s next items, at least `count` when it holds that many (never taken from
    /// another at once). Empty once all is done.
    func next(for worker: Int, upTo count: Int) -> [Item] {
        state.withLock { s -> ConditionLockedState<State>.Step<[Item]> in
            switch s.take(for: worker, upTo: count, now: MonotonicClock.nanoseconds(), stealAfter: stealAfter, capacity: capacity, size: size) {
            case .done(var items, let wake) where !items.isEmpty:
                while items.count < count, let more = s.held[worker].popFirst() { items.append(more) }
                s.handed[worker] = items.count
                return .done(items, wake: wake)
            case let other: return other
            }
        }
    }
}
