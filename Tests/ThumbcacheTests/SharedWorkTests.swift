import Foundation
import Testing
import ThumbcacheSync
@testable import Thumbcache

/// Batches handed to worker threads one item at a time: a worker with nothing to do takes half of
/// what another holds and has not started, once that one has been on one item a while; nothing
/// is lost or done twice.
struct SharedWorkTests {
    @Test func aWorkerWithNothingTakesHalfOfWhatABusyWorkerHolds() {
        let queue = SharedWork<Int>(capacity: 4, workers: 2, stealAfter: 0)
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

    /// A worker going quickly through cheap items keeps its batch: the others stay asleep
    /// instead of splitting it under one lock (a re-warm's unchanged files).
    @Test func aWorkerGoingQuicklyIsNotRobbed() {
        let queue = SharedWork<Int>(capacity: 4, workers: 2, stealAfter: 60_000_000_000)
        queue.push(Array(1...100))
        #expect(queue.next(for: 0) == 1)
        let idle = ConditionLockedState<[Int]?>(nil)
        Thread {
            var got: [Int] = []
            while let item = queue.next(for: 1) { got.append(item) }
            idle.withLock { $0 = got }
        }.start()
        usleep(20_000)  // worker 1 waits: worker 0 holds 2…100 but has just started item 1
        var done = [1]
        while let item = queue.next(for: 0) {
            done.append(item)
            if item == 100 { queue.finish() }
        }
        #expect(done == Array(1...100))
        #expect(idle.withLock(waitingUntil: { $0 != nil }) { $0 } == [])
    }

    /// Quick small items are taken several at a time (one lock for many unchanged files), large
    /// ones one at a time, whatever their pace.
    @Test func quickSmallItemsGoSeveralAtATime() {
        for (size, several) in [(UInt64(1000), true), (UInt64(1 << 20), false)] {
            let queue = SharedWork<Int>(capacity: 4, workers: 1) { _ in size }
            queue.push(Array(0..<200))
            queue.finish()
            var taken: [[Int]] = []
            while case let items = queue.take(for: 0), !items.isEmpty { taken.append(items) }
            #expect(taken.joined().elementsEqual(0..<200))
            #expect(taken.contains { $0.count > 1 } == several, "\(taken.map(\.count))")
            #expect(taken.allSatisfy { $0.count <= 64 })
        }
    }

    /// One stuck on a slow item is relieved of the rest after `stealAfter`.
    @Test func aWorkerStuckOnOneItemIsRelievedOfTheRest() {
        let queue = SharedWork<Int>(capacity: 4, workers: 2, stealAfter: 5_000_000)
        queue.push(Array(1...4))
        queue.finish()
        #expect(queue.next(for: 0) == 1)  // and stays on it
        #expect(queue.next(for: 1) == 3)  // after waiting 5 ms for worker 0 to move on
        #expect(queue.next(for: 1) == 4)
        #expect(queue.next(for: 0) == 2)
        #expect(queue.next(for: 0) == nil && queue.next(for: 1) == nil)
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
