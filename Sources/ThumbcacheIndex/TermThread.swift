import Dispatch
import Synchronization

/// Makes the posting lists of a large batch's new files on a second thread while the writing
/// thread does the batch's LMDB work (lookups, records, identifiers), then hands them back.
///
/// The two halves take about the same time in a bulk load, so on two cores the batch takes about
/// as long as the writing half alone (Docs/PERFORMANCE.md). Only values cross threads: records
/// go in, one ``PostingAccumulator`` comes out.
final class TermThread: Sendable {
    /// Smaller batches make their lists inline: a thread hand-off costs more than it saves.
    static let minimumBatch = 2048

    private struct State {
        var queue: [(UInt32, ItemRecord)] = []
        var closed = false
        var result: PostingAccumulator?
    }

    private let state = Mutex(State())
    /// Signalled once per `submit` and once by `finish`.
    private let ready = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    /// Starts the thread; `pending` are the attributes numbered in this transaction so far
    /// (every attribute the records use).
    init(index: MetadataIndex, pending: [String: AttributeInfo]) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in run(index, pending) }
    }

    /// Queues new items (number, record) whose lists are all additions.
    func submit(_ items: [(UInt32, ItemRecord)]) {
        guard !items.isEmpty else { return }
        state.withLock { $0.queue.append(contentsOf: items) }
        ready.signal()
    }

    /// Ends the input, waits for the thread, and returns the lists of everything submitted.
    func finish() -> PostingAccumulator {
        state.withLock { $0.closed = true }
        ready.signal()
        done.wait()
        return state.withLock { $0.result.take() } ?? PostingAccumulator()
    }

    private func run(_ index: MetadataIndex, _ pending: [String: AttributeInfo]) {
        var sink = AccumulatorSink(postings: PostingAccumulator(), doc: 0)
        var closed = false
        while !closed {
            ready.wait()
            let items: [(UInt32, ItemRecord)]
            (items, closed) = state.withLock { s in
                defer { s.queue.removeAll(keepingCapacity: true) }
                return (s.queue, s.closed)
            }
            for (doc, record) in items {
                sink.doc = doc
                index.forEachTerm(record, pending, &sink)
            }
        }
        let result = sink.postings
        state.withLock { $0.result = result }
        done.signal()
    }
}
