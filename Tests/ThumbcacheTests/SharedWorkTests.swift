import Foundation
import Testing
import ThumbcacheSync
@testable import Thumbcache

/// Batches handed to worker threads one item at a time: a worker with nothing to do takes half of
/// what another holds and has not started, even while that one is busy; nothing is lost or done twice.
struct SharedWorkTests {
    @Test func aWorkerWithNothingTakesHalfOfWhatABusyWorkerHolds() {
        let queue = SharedWork<Int>(capacity: 4, workers: 2)
        queue.push(Array(1...8))
        queue.finish()
        // Worker 0 starts item 1 (a slow file, say) and holds 2…8; worker 1 takes 5…8 at once.
        #expect(queue.next(for: 0) == 1)
        #expect(queue.next(for: 1) == 5)
        #expect(queue.next(for: 0) == 2)
        #expect(queue.next(for: 0) == 3)
        #expect(queue.next(for: 0) == 4)
        // Worker 0 is out, worker 1 holds 6…8: worker 0 takes 7 and 8.
        #expect(queue.next(for: 0) == 7)
        #expect(queue.next(for: 1) == 6)
        #expect(queue.next(for: 1) == 8)  // worker 0 holds 8 and has not started it
        #expect(queue.next(for: 0) == nil)
        #expect(queue.next(for: 1) == nil)
    }

    @Test func aWaitingWorkerGetsTheNextBatchAndStopsWhenAllIsDone() throws {
        let queue = SharedWork<Int>(capacity: 4, workers: 2)
        let seen = ConditionLockedState<[Int]>([])
        let done = ConditionLockedState(false)
        Thread {
            while let item = queue.next(for: 1) { seen.withLock { $0.append(item) } }
            done.withLock { $0 = true }
        }.start()
        usleep(20_000)  // it waits: nothing is queued and the producer has not finished
        #expect(done.withLock { $0 } == false)
        queue.push([1])
        seen.withLock(waitingUntil: { $0 == [1] }) { _ in }
        queue.push([2, 3])
        seen.withLock(waitingUntil: { $0 == [1, 2, 3] }) { _ in }
        queue.finish()
        done.withLock(waitingUntil: { $0 }) { _ in }
    }

    @Test func everyItemIsDoneOnceAcrossBusyWorkers() {
        let queue = SharedWork<Int>(capacity: 8, workers: 3)
        let seen = ConditionLockedState<[Int]>([])
        let finished = DispatchGroup()
        for worker in 0..<3 {
            finished.enter()
            Thread {
                while let item = queue.next(for: worker) {
                    if item % 7 == 0 { usleep(2000) }  // a slow file now and then
                    seen.withLock { $0.append(item) }
                }
                finished.leave()
            }.start()
        }
        var next = 0
        for size in [1, 2, 4, 8, 16, 32, 32, 32, 32, 32] {
            queue.push(Array(next..<next + size))
            next += size
        }
        queue.finish()
        finished.wait()
        #expect(seen.withLock { $0 }.sorted() == Array(0..<next))
    }
}
