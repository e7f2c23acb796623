import Foundation
import Testing
import ThumbcacheSync
@testable import Thumbcache

/// Batches handed to worker threads: a worker with nothing to do gets part of another's batch,
/// and no worker stops while another still holds work it could give.
struct SharedWorkTests {
    @Test func aWaitingWorkerGetsHalfOfAnotherWorkersBatch() throws {
        let queue = SharedWork<Int>(capacity: 4)
        queue.push(Array(1...8))
        queue.finish()
        let done = ConditionLockedState<[String: [Int]]>([:])
        let first = try #require(queue.take())
        #expect(first == Array(1...8))

        let second = Thread {
            var mine: [Int] = []
            while let batch = queue.take() {
                mine += batch
                queue.done()
            }
            done.withLock { $0["second", default: []] = mine }
        }
        second.start()
        // The second worker found the queue empty and waits, though the producer has finished.
        let deadline = Date().addingTimeInterval(10)
        while queue.waitingWorkers == 0 && Date() < deadline { usleep(1000) }
        #expect(queue.waitingWorkers == 1)

        var rest = first[...]
        var mine: [Int] = []
        while let item = rest.popFirst() {
            queue.share(&rest)
            mine.append(item)
        }
        queue.done()
        let all = done.withLock(waitingUntil: { $0["second"] != nil }) { $0["second"]! }
        // The first share gave the latter half ([6, 7, 8]); later ones may give more as it waits again.
        #expect(mine.first == 1 && all.prefix(3) == [6, 7, 8])
        #expect((mine + all).sorted() == Array(1...8))
        #expect(queue.take() == nil)
    }

    @Test func nothingIsSharedWhenNoWorkerWaits() {
        let queue = SharedWork<Int>(capacity: 4)
        queue.push([1, 2, 3])
        queue.finish()
        var rest = (queue.take() ?? [])[...]
        queue.share(&rest)
        #expect(Array(rest) == [1, 2, 3])
        queue.done()
        #expect(queue.take() == nil)
    }
}
