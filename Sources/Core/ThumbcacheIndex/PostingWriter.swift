import Glibc
import ThumbcacheLMDB
import ThumbcacheSync

extension MetadataIndex {
    /// Applies a transaction's posting edits: lists in key order through one cursor, so the
    /// walk over the `postings` database goes forward and mostly stays on the page it is on.
    /// With many lists a helper thread takes half (see ``PostingApplication``), unless `helper`
    /// is false: when this transaction has written `postings` already.
    func applyChanges(_ accumulator: PostingAccumulator, _ txn: borrowing Transaction, helper: Bool = true) throws {
        if helper && accumulator.listCount >= Self.parallelApplyLists {
            let application = PostingApplication(accumulator, self)
            try application.finish(txn)
            return
        }
        let lists = accumulator.grouped()
        try txn.withCursor(postings) { c in
            var w = PostingWriter()
            try lists.forEachList(0..<lists.count) { prefix, ops in try w.apply(prefix, ops, c) }
        }
    }

    /// Batches touching fewer lists apply them on one thread: a hand-off costs more than it saves.
    static let parallelApplyLists = 4096
}

/// Posting edits applied on two threads. A helper groups them per list and splits the lists
/// into two halves of about equal work; this thread applies the first half (``finish(_:)``)
/// while the helper reads the second half's chunks in a read transaction, merges and encodes
/// them into a ``WritePlan``, which this thread then writes. The halves touch different keys.
///
/// Start it before anything in the write transaction writes `postings`: the read transaction
/// sees `postings` as the write transaction started, which is what it must plan against. Started
/// early, the grouping and planning overlap whatever the writing thread does before `finish`.
final class PostingApplication: Sendable {
    private struct Grouped: Sendable {
        var lists: GroupedEdits
        var split: Int
    }
    private let grouped = ConditionLockedState<Grouped?>(nil)
    private let plan: HelperWork<WritePlan>
    /// Whether the plan was taken (it must be, exactly once: the helper may be reading).
    private let taken = ConditionLockedState(false)
    private let postings: Database

    /// - Parameter early: started before the writing thread's other work (records, hashes), so
    ///   the helper has a head start and takes more of the lists.
    init(_ accumulator: PostingAccumulator, _ index: MetadataIndex, early: Bool = false) {
        postings = index.postings
        plan = HelperWork { [grouped] in
            let lists = accumulator.grouped()
            let split = lists.balancedSplit(firstShare: early ? Self.writerShareWhenEarly : 0.5)
            grouped.withLock { $0 = Grouped(lists: lists, split: split) }
            return try index.environment.read { reader in
                try reader.withCursor(index.postings) { c in
                    var w = PostingWriter(planning: true)
                    try lists.forEachList(split..<lists.count) { prefix, ops in try w.apply(prefix, ops, c) }
                    return w.plan
                }
            }
        }
    }

    /// The writing thread's share of the lists when the helper starts early. Measured on 1M-item
    /// bulk loads: with half each, the helper's plan was always ready before the writer finished
    /// its half (the writer spent 0.8–1.0 s applying, 0.15 s writing the plan, no time waiting);
    /// with 0.35–0.42, 0.46–0.75 s applying and 0.01–0.26 s waiting.
    static let writerShareWhenEarly = 0.4

    /// Applies every edit through the write transaction `txn`.
    func finish(_ txn: borrowing Transaction) throws {
        defer { cancel() }  // also when this half fails: the helper's read ends first
        let g = grouped.withLock(waitingUntil: { $0 != nil }) { $0! }
        try txn.withCursor(postings) { c in
            var w = PostingWriter()
            try g.lists.forEachList(0..<g.split) { prefix, ops in try w.apply(prefix, ops, c) }
            try takePlan()?.get().write(c)
        }
    }

    /// Waits for the helper and drops its work, unless ``finish(_:)`` took it.
    func cancel() { _ = takePlan() }

    /// The helper's answer, once; nil after that.
    private func takePlan() -> Result<WritePlan, any Error>? {
        guard taken.withLock({ t in defer { t = true }; return !t }) else { return nil }
        return Result { try plan.result() }
    }
}

/// Chunk writes and deletions, in the order made, for a writing thread to carry out.
struct WritePlan: Sendable {
    private var bytes: [UInt8] = []
    /// (key end, value end or -1 for a deletion) into `bytes`, each entry after the previous.
    private var entries: [(keyEnd: Int, valueEnd: Int)] = []

    mutating func put(_ key: [UInt8], _ value: [UInt8]) {
        bytes.append(contentsOf: key)
        let keyEnd = bytes.count
        bytes.append(contentsOf: value)
        entries.append((keyEnd, bytes.count))
    }

    mutating func delete(_ key: [UInt8]) {
        bytes.append(contentsOf: key)
        entries.append((bytes.count, -1))
    }

    /// Carries the plan out through `c`, a cursor over `postings` in a write transaction.
    func write(_ cursor: borrowing Cursor) throws {
        try bytes.withUnsafeBytes { b in
            var start = 0
            for (keyEnd, valueEnd) in entries {
                let key = UnsafeRawBufferPointer(rebasing: b[start..<keyEnd])
                if valueEnd < 0 {
                    if try cursor.seek(exactly: key) != nil { try cursor.deleteCurrent() }
                    start = keyEnd
                } else {
                    try cursor.put(key, UnsafeRawBufferPointer(rebasing: b[keyEnd..<valueEnd]))
                    start = valueEnd
                }
            }
        }
    }
}

/// Edits posting lists chunk by chunk (see ``Postings``), with buffers reused from list to list:
/// each change lands in the chunk whose first item is the greatest ≤ it (or the list's first
/// chunk); a touched chunk is read, merged and written back split to size.
struct PostingWriter {
    /// The net change per item, ascending: item << 1 | (1 for add).
    private var changes: [UInt64] = []
    private var last: [UInt32: Bool] = [:]
    private var key: [UInt8] = []
    private var itemNumbers: [UInt32] = []
    private var merged: [UInt32] = []
    private var value: [UInt8] = []
    /// Planning (see ``WritePlan``): writes and deletions are recorded, not made.
    private let planning: Bool
    private(set) var plan = WritePlan()

    init(planning: Bool = false) { self.planning = planning }

    /// Applies `ops` (item << 1 | add, in the order made; the last op per item wins) to the list
    /// whose key prefix is `prefix`.
    mutating func apply(_ prefix: UnsafeRawBufferPointer, _ ops: ArraySlice<UInt32>, _ cursor: borrowing Cursor) throws {
        netChanges(ops)
        var k = 0
        while k < changes.count {
            let d = UInt32(changes[k] >> 1)
            let (start, next) = try chunk(containing: d, prefix, cursor)
            var end = k
            while end < changes.count && (next == nil || UInt32(changes[end] >> 1) < next!) { end += 1 }
            mergeChanges(k..<end)
            if let start, merged.first != start {
                setKey(prefix, start)
                if planning {
                    plan.delete(key)
                } else {
                    try key.withUnsafeBytes { k in
                        if try cursor.seek(exactly: k) != nil { try cursor.deleteCurrent() }
                    }
                }
            }
            try writeRuns(prefix, cursor)
            k = end
        }
    }

    /// Sorted, one change per item; usually the ops already are (each item once, increasing).
    private mutating func netChanges(_ ops: ArraySlice<UInt32>) {
        changes.removeAll(keepingCapacity: true)
        var simple = true
        var previous: UInt32?
        for op in ops {
            if let p = previous, op >> 1 < p >> 1 || (op >> 1 == p >> 1 && op != p) { simple = false; break }
            previous = op
        }
        if simple {
            previous = nil
            for op in ops where op != previous {
                changes.append(UInt64(op))
                previous = op
            }
            return
        }
        last.removeAll(keepingCapacity: true)
        for op in ops { last[op >> 1] = op & 1 == 1 }
        for (itemNumber, add) in last.sorted(by: { $0.key < $1.key }) { changes.append(UInt64(itemNumber) << 1 | (add ? 1 : 0)) }
    }

    private mutating func setKey(_ prefix: UnsafeRawBufferPointer, _ first: UInt32) {
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: prefix)
        Postings.appendBE(&key, first)
    }

    /// Finds the chunk `d` belongs in, decodes it into `itemNumbers`, and returns its first item and
    /// the first item of the list's next chunk (nil: none). A new list: (nil, nil), `itemNumbers` empty.
    private mutating func chunk(containing d: UInt32, _ prefix: UnsafeRawBufferPointer, _ cursor: borrowing Cursor) throws -> (UInt32?, UInt32?) {
        itemNumbers.removeAll(keepingCapacity: true)
        setKey(prefix, d)
        func start(_ e: Cursor.Entry?) -> UInt32? {
            guard let e, e.key.count == prefix.count + 4, memcmp(e.key.baseAddress!, prefix.baseAddress!, prefix.count) == 0 else { return nil }
            return Postings.readBE(e.key, at: prefix.count)
        }
        let atLeast = try key.withUnsafeBytes { try cursor.seek(atLeast: $0) }
        let following = start(atLeast)
        if following == d {
            Postings.forEach(atLeast!.value) { itemNumbers.append($0) }
            return (d, start(try cursor.next()))
        }
        let before = atLeast == nil ? try cursor.last() : try cursor.previous()
        if let s = start(before) {
            Postings.forEach(before!.value) { itemNumbers.append($0) }
            return (s, following)
        }
        guard let first = following else { return (nil, nil) }
        // `d` comes before the list's first chunk: it joins that chunk.
        setKey(prefix, first)
        let e = try key.withUnsafeBytes { try cursor.seek(exactly: $0) }
        if let e { Postings.forEach(e.value) { itemNumbers.append($0) } }
        return (first, start(try cursor.next()))
    }

    private mutating func mergeChanges(_ range: Range<Int>) {
        merged.removeAll(keepingCapacity: true)
        var i = 0
        for change in changes[range] {
            let itemNumber = UInt32(change >> 1)
            while i < itemNumbers.count && itemNumbers[i] < itemNumber { merged.append(itemNumbers[i]); i += 1 }
            if i < itemNumbers.count && itemNumbers[i] == itemNumber { i += 1 }
            if change & 1 == 1 { merged.append(itemNumber) }
        }
        merged.append(contentsOf: itemNumbers[i...])
    }

    /// Writes `merged` as chunks of at most ``Postings/chunkBytes``, each in the form that
    /// holds more items from where it starts (the bitmap form once items are denser than about
    /// one in eight numbers).
    private mutating func writeRuns(_ prefix: UnsafeRawBufferPointer, _ cursor: borrowing Cursor) throws {
        var start = 0
        while start < merged.count {
            // The gaps form grows while it fits (a count varint of at most 3 bytes, then the gaps).
            var size = 3 + Varint.size(UInt64(merged[start]))
            var end = start + 1
            while end < merged.count {
                let add = Varint.size(UInt64(merged[end] - merged[end - 1]))
                if size + add > Postings.chunkBytes { break }
                size += add
                end += 1
            }
            // The bitmap form holds what lies within its span.
            var bitmapEnd = start + 1
            let limit = UInt64(merged[start]) + UInt64(Postings.bitmapSpan)
            while bitmapEnd < merged.count && UInt64(merged[bitmapEnd]) < limit { bitmapEnd += 1 }
            let bitmap = bitmapEnd > end || (bitmapEnd == end && Self.bitmapIsSmaller(merged[start..<end]))
            if bitmap { end = bitmapEnd }
            value.removeAll(keepingCapacity: true)
            let run = merged[start..<end]
            if bitmap { Postings.encodeBitmap(run, into: &value) } else { Postings.encodeGaps(run, into: &value) }
            setKey(prefix, merged[start])
            if planning {
                plan.put(key, value)
            } else {
                try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try cursor.put(k, v) } }
            }
            start = end
        }
    }

    /// Whether the bitmap form of `itemNumbers` takes fewer bytes than the gaps form.
    static func bitmapIsSmaller(_ itemNumbers: ArraySlice<UInt32>) -> Bool {
        let header = Varint.size(UInt64(itemNumbers.count)) + Varint.size(UInt64(itemNumbers.first!))
        let bitmap = 1 + header + Int(itemNumbers.last! - itemNumbers.first!) / 8 + 1
        var gaps = header
        var previous = itemNumbers.first!
        for d in itemNumbers.dropFirst() {
            gaps += Varint.size(UInt64(d - previous))
            if gaps > bitmap { return true }
            previous = d
        }
        return false
    }
}
