import Dispatch
import ThumbcacheSync

/// The CPU side of a file batch's new files — their records and posting lists — built on the
/// writing thread and, for large batches, a helper thread.
///
/// The writing thread finds the new files (a pass over `ids` in path order, numbering them as it
/// goes) and hands them over in groups of 256; the helper builds groups from the front as they
/// come. When the pass ends the writing thread takes the back half of the groups not yet started,
/// so the two finish about together. Each thread builds consecutive groups and item numbers rise
/// with the groups, so the helper's lists followed by the writing thread's are in item order per
/// list, which ``PostingWriter`` applies without sorting. Only values cross threads.
final class NewFileBuild: Sendable {
    /// Smaller batches are built on the writing thread alone: a hand-off costs more than it saves.
    static let minimumBatch = 2048
    static let groupSize = 256

    /// A group's files (index in the batch, item number) and, once built, their records.
    struct Group: Sendable {
        var files: [(index: Int, itemNumber: UInt32)] = []
        /// Record `k` is `records[ends[k - 1] ..< ends[k]]` (`ends[-1]` = 0).
        var records: [UInt8] = []
        var ends: [Int] = []

        /// Calls `body` with each file's item number and record.
        func forEachRecord(_ body: (UInt32, UnsafeRawBufferPointer) throws -> Void) rethrows {
            try records.withUnsafeBytes { all in
                for (k, file) in files.enumerated() {
                    try body(file.itemNumber, UnsafeRawBufferPointer(rebasing: all[(k == 0 ? 0 : ends[k - 1])..<ends[k]]))
                }
            }
        }
    }

    private struct State {
        var groups: [Group] = []
        /// The next group the helper takes, and where it stops (set by `finish`).
        var next = 0
        var limit: Int?
        var helperPostings: PostingAccumulator?
    }

    private let files: [FileItem]
    private let table: AttributeTable
    private let threaded: Bool
    /// Every change wakes the other thread.
    private let state = ConditionLockedState(State())

    /// Starts the helper if `files` is a large batch; `table` knows every attribute they use.
    init(files: [FileItem], table: AttributeTable) {
        self.files = files
        self.table = table
        threaded = files.count >= Self.minimumBatch
        if threaded { DispatchQueue.global(qos: .userInitiated).async { [self] in helper() } }
    }

    /// Queues new files (index in the batch, item number), in item order.
    func submit(_ files: [(index: Int, itemNumber: UInt32)]) {
        guard !files.isEmpty else { return }
        state.withLock { $0.groups.append(Group(files: files)) }
    }

    /// Ends the input, builds the groups the helper has not started, waits for it, and returns
    /// every group with its records, in item order, and the posting lists of them all.
    /// Must be called once, also when the caller gives up on the batch (it stops the helper).
    func finish() -> (groups: [Group], postings: PostingAccumulator) {
        let (mine, first) = state.withLock { s in
            let split = threaded ? s.next + (s.groups.count - s.next + 1) / 2 : 0
            s.limit = split
            return (Array(s.groups[split...]), split)
        }
        var sink = AccumulatorSink(postings: PostingAccumulator(), itemNumber: 0)
        var scratch = Scratch()
        let built = mine.map { build($0, &sink, &scratch) }
        return state.withLock(waitingUntil: { !threaded || $0.helperPostings != nil }) { s in
            s.groups.replaceSubrange(first..., with: built)
            var postings = s.helperPostings.take() ?? PostingAccumulator()
            postings.append(contentsOf: sink.postings)
            return (s.groups, postings)
        }
    }

    private func helper() {
        var sink = AccumulatorSink(postings: PostingAccumulator(), itemNumber: 0)
        var scratch = Scratch()
        while true {
            enum Step { case build(Int, Group), stop }
            // A group to build, or the end (`finish` set the limit, which is at most the count).
            let step: Step = state.withLock(waitingUntil: { $0.next < $0.groups.count || $0.limit != nil }) { s in
                if let limit = s.limit, s.next >= limit { return .stop }
                defer { s.next += 1 }
                return .build(s.next, s.groups[s.next])
            }
            switch step {
            case .build(let n, let group):
                let built = build(group, &sink, &scratch)
                state.withLock { $0.groups[n] = built }
            case .stop:
                let postings = sink.postings
                state.withLock { $0.helperPostings = postings }
                return
            }
        }
    }

    /// Reused buffers of one thread.
    private struct Scratch {
        var folded: [UInt8] = []
        /// The previous file's path and its directory lists (end of the directory in the path,
        /// list number): files come in path order, so most ancestors repeat.
        var path: [UInt8] = []
        var directories: [(end: Int, list: Int32)] = []
        var next: [(end: Int, list: Int32)] = []
    }

    /// Each file's record, written straight from what the caller gave (no attribute dictionary
    /// by number), and its lists.
    private func build(_ group: Group, _ sink: inout AccumulatorSink, _ scratch: inout Scratch) -> Group {
        var out = group
        out.records.reserveCapacity(group.files.count * 256)
        out.ends.reserveCapacity(group.files.count)
        // Items and attributes read in place (a copy of an item is a retain per field, per file).
        files.withUnsafeBufferPointer { files in
            for (index, itemNumber) in group.files {
                RecordCoding.header(&out.records, kind: .file, identifier: files[index].path, contentHash: files[index].contentHash,
                                    fileState: files[index].state)
                sink.itemNumber = itemNumber
                sink.exists(Schema.allItemsID)
                sink.exists(Schema.pathID)
                directoryTerms(files[index].path, &sink.postings, itemNumber, &scratch)
                // Each attribute goes straight into the record and the lists (copying it into a
                // scratch array first cost a retain per string); the count is written after.
                let countAt = out.records.count
                out.records.append(0)
                var count = 0
                table.forEachAttribute(of: files[index]) { info, value in
                    RecordCoding.attribute(&out.records, info.id, value)
                    ItemTerms.valueTerms(info, value, &scratch.folded, &sink)
                    count += 1
                }
                if count < 0x80 {
                    out.records[countAt] = UInt8(count)
                } else {
                    var varint: [UInt8] = []
                    Varint.append(&varint, UInt64(count))
                    out.records.replaceSubrange(countAt...countAt, with: varint)
                }
                Varint.append(&out.records, 0)  // no overlay: nothing links to a new file here
                out.ends.append(out.records.count)
            }
        }
        return out
    }

    /// ``ItemTerms/pathTerms(_:of:_:)``'s directory lists, numbers reused from the previous path.
    private func directoryTerms(_ path: String, _ postings: inout PostingAccumulator, _ itemNumber: UInt32, _ scratch: inout Scratch) {
        var path = path
        path.withUTF8 { bytes in
            var common = 0
            scratch.path.withUnsafeBufferPointer { previous in
                while common < min(bytes.count, previous.count) && bytes[common] == previous[common] { common += 1 }
            }
            scratch.next.removeAll(keepingCapacity: true)
            var k = 0
            ItemTerms.forEachDirectory(bytes, of: .file) { i in
                while k < scratch.directories.count && scratch.directories[k].end < i { k += 1 }
                let list: Int32
                if i < common, k < scratch.directories.count, scratch.directories[k].end == i {
                    list = scratch.directories[k].list  // the same directory as the previous path's
                } else {
                    list = postings.list(.directory, Schema.pathID, ItemTerms.directoryTerm(bytes, i))
                }
                postings.add(list: list, itemNumber)
                scratch.next.append((i, list))
            }
            scratch.path.removeAll(keepingCapacity: true)
            scratch.path.append(contentsOf: bytes)
        }
        swap(&scratch.directories, &scratch.next)
    }
}
