import ThumbcacheLMDB

/// A word's postings as a search walks them, in a read transaction: documents ascending, each
/// with its frequency and positions. Blocks are decoded one at a time, when the walk reaches
/// them, so an intersection that leaps over documents never decodes the blocks it leaps.
/// A prefix's postings (many words merged) are made into one block of its own.
struct PostingCursor {
    private struct Entry {
        var document: UInt32
        var frequency: UInt32
    }

    /// Each block's first document (from its key) and bytes, valid in the transaction that read them.
    private var firsts: [UInt32] = []
    private var blocks: [UnsafeRawBufferPointer] = []
    /// The documents in all blocks (each block's header says how many).
    private(set) var count = 0
    private var block = -1
    private var entries: [Entry] = []
    /// The memory of a block made here rather than read (a prefix's), kept while the cursor is.
    private var ownBlock: OwnedBytes?
    private var index = 0
    /// The entry of the decoded block whose positions start at `positionsOffset` (found by
    /// skipping the positions of those before it, only when positions are asked for).
    private var positionsEntry = 0
    private var positionsOffset = 0

    /// The postings of `word` in `database` (the full-text words), none decoded yet.
    init(word: [UInt8], in database: Database, _ txn: borrowing Transaction) throws {
        let start = TextPostings.prefix(word)
        var firsts: [UInt32] = []
        var blocks: [UnsafeRawBufferPointer] = []
        var count = 0
        try start.withUnsafeBytes { s in
            try txn.forEach(database, from: s) { key, block in
                guard key.count == start.count + 4, key.starts(with: start) else { return false }
                var o = 0
                guard let n = Varint.read(block, &o) else { return true }  // malformed: skipped, as a read skips it
                firsts.append(Postings.readBE(key, at: start.count))
                blocks.append(block)
                count += Int(n)
                return true
            }
        }
        self.firsts = firsts
        self.blocks = blocks
        self.count = count
        load(0)
    }

    /// Postings already decoded: `documents` ascending, their frequencies, and each one's
    /// positions if they will be asked for (then made into a block, as if read).
    init(documents: [UInt32], frequencies: [UInt32], positions: [[UInt32]]? = nil) {
        count = documents.count
        guard let positions, let first = documents.first else {
            entries = zip(documents, frequencies).map { Entry(document: $0, frequency: $1) }
            block = 0
            return
        }
        var bytes: [UInt8] = []
        Varint.append(&bytes, UInt64(documents.count))
        var previous = first
        for (document, frequency) in zip(documents, frequencies) {
            Varint.append(&bytes, UInt64(document - previous))
            Varint.append(&bytes, UInt64(frequency))
            previous = document
        }
        for list in positions {
            var last: UInt32 = 0
            for (i, p) in list.enumerated() {
                Varint.append(&bytes, UInt64(i == 0 ? p : p - last))
                last = p
            }
        }
        let owned = OwnedBytes(bytes)
        ownBlock = owned
        firsts = [first]
        blocks = [UnsafeRawBufferPointer(owned.bytes)]
        load(0)
    }

    var atEnd: Bool { index >= entries.count }
    /// The current document's place among all of them (for postings held decoded: one block).
    var row: Int { index }
    /// The current document (not at the end).
    var document: UInt32 { entries[index].document }
    var frequency: UInt32 { entries[index].frequency }

    /// Moves to the next document.
    mutating func advance() {
        index += 1
        if index >= entries.count { load(block + 1) }
    }

    /// Moves to the first document at or after `target`; false if there is none.
    mutating func seek(_ target: UInt32) -> Bool {
        guard !atEnd else { return false }
        if entries[index].document >= target { return true }
        if entries[entries.count - 1].document >= target {
            index = Self.firstIndex(in: entries, from: index, atLeast: target)
            return true
        }
        guard block + 1 < blocks.count else {
            index = entries.count
            return false
        }
        // The last block starting at or before the target, by galloping over the blocks' firsts.
        var b = block + 1
        if firsts[b] <= target {
            var step = 1
            while b + step < firsts.count, firsts[b + step] <= target { b += step; step *= 2 }
            var hi = min(b + step, firsts.count)
            while b + 1 < hi {
                let mid = (b + hi) / 2
                if firsts[mid] <= target { b = mid } else { hi = mid }
            }
        }
        load(b)
        if atEnd || entries[entries.count - 1].document >= target {
            if !atEnd { index = Self.firstIndex(in: entries, from: 0, atLeast: target) }
            return !atEnd
        }
        load(block + 1)  // the target is past this block's documents: the next block starts after it
        return !atEnd
    }

    /// Every document from here to the end, as the match of this word alone.
    mutating func remaining() -> TextMatch {
        var documents: [UInt32] = [], frequencies: [UInt32] = []
        documents.reserveCapacity(count)
        frequencies.reserveCapacity(count)
        while !atEnd {
            for entry in entries[index...] {
                documents.append(entry.document)
                frequencies.append(entry.frequency)
            }
            index = entries.count
            load(block + 1)
        }
        return TextMatch(documents: documents, parts: [(count, frequencies)])
    }

    /// The current document's positions, to be read in order.
    mutating func positions() -> PositionStream {
        return PositionStream(bytes: blocks[block], at: positionsStart(), count: Int(entries[index].frequency))
    }

    /// The varint at `o` (a position gap), nil past the end or if malformed; one byte is the common case.
    @inline(__always)
    static func gap(_ bytes: UnsafeRawBufferPointer, _ o: inout Int) -> UInt32? {
        guard o < bytes.count else { return nil }
        let b = bytes[o]
        if b < 0x80 {
            o += 1
            return UInt32(b)
        }
        return Varint.read(bytes, &o).map { UInt32(truncatingIfNeeded: $0) }
    }

    /// Where the current document's positions start in its block: the positions of the
    /// documents before it (since the last asked for) skipped unread.
    private mutating func positionsStart() -> Int {
        while positionsEntry < index {
            _ = TextPostings.skip(blocks[block], &positionsOffset, Int(entries[positionsEntry].frequency))
            positionsEntry += 1
        }
        return positionsOffset
    }

    /// Decodes block `b` and stands on its first document (at the end past the last block);
    /// an empty or malformed block is passed over.
    private mutating func load(_ b: Int) {
        var decoded = entries  // moved out and back, so appends need no copy
        entries = []
        block = b
        index = 0
        decoded.removeAll(keepingCapacity: true)
        while block < blocks.count {
            let positions = TextPostings.forEachDocument(blocks[block], first: firsts[block]) { document, frequency in
                decoded.append(Entry(document: document, frequency: frequency))
            }
            if let positions, !decoded.isEmpty {
                positionsEntry = 0
                positionsOffset = positions
                break
            }
            decoded.removeAll(keepingCapacity: true)
            block += 1
        }
        entries = decoded
    }

    private static func firstIndex(in entries: [Entry], from: Int, atLeast target: UInt32) -> Int {
        var lo = from, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].document < target { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

/// One document's positions of one word, read in order as a phrase asks for them.
struct PositionStream {
    private let bytes: UnsafeRawBufferPointer
    private var offset: Int
    private var remaining: Int
    /// The position read last (0 before the first).
    private(set) var position: UInt32 = 0
    private var started = false

    init(bytes: UnsafeRawBufferPointer, at offset: Int, count: Int) {
        self.bytes = bytes
        self.offset = offset
        remaining = count
    }

    /// Reads the next position; false when there is none.
    @inline(__always)
    mutating func next() -> Bool {
        guard remaining > 0 else { return false }
        remaining -= 1
        guard let gap = PostingCursor.gap(bytes, &offset) else {
            remaining = 0
            return false
        }
        position = started ? position &+ gap : gap  // the first is absolute
        started = true
        return true
    }

    /// Reads on to the first position at or after `wanted`: whether it is `wanted`. When the
    /// positions end before it, ``position`` stays below `wanted`.
    @inline(__always)
    mutating func reach(_ wanted: UInt32) -> Bool {
        while !started || position < wanted {
            guard next() else { return false }
        }
        return position == wanted
    }
}

/// Bytes allocated by hand, so a pointer to them stays valid for as long as this object lives.
final class OwnedBytes {
    let bytes: UnsafeMutableRawBufferPointer

    init(_ contents: [UInt8]) {
        bytes = .allocate(byteCount: max(contents.count, 1), alignment: 8)
        contents.withUnsafeBytes { bytes.copyMemory(from: $0) }
    }

    deinit { bytes.deallocate() }
}
