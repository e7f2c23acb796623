import Dispatch
import Synchronization
import ThumbcacheStore

/// Keeps a store's thumbnails within a byte budget by itself, off the readers' path.
///
/// Callers report the bytes they add; after every tenth of the budget, a background job
/// (a GCD utility queue, one at a time) checks the total and, if it is over, collects garbage
/// and then evicts the least recently used thumbnails down to 90 % of the budget, so that it
/// does not run again at once. Readers never wait: the job's writes are batched transactions.
package final class CacheBudget: Sendable {
    package let store: ThumbnailStore
    /// Bytes of thumbnails to keep at most.
    package let budget: Int
    private let added = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let jobs = DispatchGroup()
    private let runs = Atomic<Int>(0)

    package init(store: ThumbnailStore, budget: Int) {
        self.store = store
        self.budget = max(1, budget)
    }

    /// Notes `bytes` of new thumbnails; may start a background check.
    package func added(_ bytes: Int) {
        let total = added.add(bytes, ordering: .relaxed).newValue
        if total >= max(1, budget / 10) { check() }
    }

    /// Starts a background check now, unless one is running.
    package func check() {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        added.store(0, ordering: .relaxed)
        let store = self.store, budget = self.budget
        DispatchQueue.global(qos: .utility).async(group: jobs) { [self] in
            defer { running.store(false, ordering: .releasing) }
            guard let total = try? store.thumbnailBytes(), total > budget else { return }
            runs.add(1, ordering: .relaxed)
            _ = try? store.collectGarbage()
            if let left = try? store.thumbnailBytes(), left > budget {
                _ = try? store.evict(toFit: budget / 10 * 9)
            }
        }
    }

    /// Waits for a running check to finish.
    package func waitUntilIdle() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            jobs.notify(queue: .global()) { done.resume() }
        }
    }

    /// How many checks found the cache over budget and trimmed it.
    package var trims: Int { runs.load(ordering: .relaxed) }
}
