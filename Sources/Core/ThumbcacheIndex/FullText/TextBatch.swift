/// The postings of a batch of documents, built in memory before one transaction appends them:
/// terms interned in an arena (no allocation per word), each term's entries encoded as they come.
struct TextBatch {
    private(set) var terms = TermTable()
    /// Per term: its entries in ``TextPostings``' form; the first entry's gap is 0 and its
    /// document is in `firsts`.
    private var entries: [[UInt8]] = []
    private var firsts: [UInt32] = []
    private var lasts: [UInt32] = []
    // One document's scratch: per term, the last position seen (-1: none yet); per position, the
    // term's previous position, so each term's positions chain backwards without an array each.
    private var chainHead: [Int32] = []
    private var chainNext: [Int32] = []
    private var touched: [Int32] = []
    private var scratch: [UInt32] = []

    var isEmpty: Bool { entries.isEmpty }

    /// Adds `text` as `document` (greater than every document added before); returns its word count.
    mutating func add(document: UInt32, text: UnsafeRawBufferPointer, breaker: WordBreaker) -> UInt32 {
        chainNext.removeAll(keepingCapacity: true)
        touched.removeAll(keepingCapacity: true)
        breaker.forEachWord(in: text) { word, _ in
            let id = Int(terms.intern(word))
            if id == entries.count {
                entries.append([])
                firsts.append(document)
                lasts.append(document)
                chainHead.append(-1)
            }
            let position = Int32(chainNext.count)
            if chainHead[id] < 0 { touched.append(Int32(id)) }
            chainNext.append(chainHead[id])
            chainHead[id] = position
        }
        for t in touched {
            let id = Int(t)
            scratch.removeAll(keepingCapacity: true)
            var p = chainHead[id]
            while p >= 0 {
                scratch.append(UInt32(p))
                p = chainNext[Int(p)]
            }
            chainHead[id] = -1
            if entries[id].isEmpty { firsts[id] = document }
            Varint.append(&entries[id], UInt64(entries[id].isEmpty ? 0 : document - lasts[id]))
            Varint.append(&entries[id], UInt64(scratch.count))
            var last: UInt32 = 0
            for (k, position) in scratch.reversed().enumerated() {
                Varint.append(&entries[id], UInt64(k == 0 ? position : position - last))
                last = position
            }
            lasts[id] = document
        }
        return UInt32(chainNext.count)
    }

    /// The term numbers in byte order of the terms.
    func sortedOrder() -> [Int] { terms.sortedOrder() }

    /// Calls `body` with a function giving term `id`'s bytes, first document and encoded entries.
    func withTerms<R>(_ body: ((Int) -> (term: UnsafeRawBufferPointer, first: UInt32, entries: [UInt8])) throws -> R) rethrows -> R {
        try terms.withKeys { key in
            try withoutActuallyEscaping(key) { key in try body { id in (key(id), firsts[id], entries[id]) } }
        }
    }
}

/// A batch built from some of a transaction's documents: their postings, terms in order, and
/// each document's record and word count. Built on a thread of its own.
struct BuiltTexts: Sendable {
    var batch = TextBatch()
    var order: [Int] = []
    var documents: [(document: UInt32, hash: [UInt8], record: [UInt8], words: UInt32)] = []

    init(_ texts: ArraySlice<(document: UInt32, hash: [UInt8], text: [UInt8])>) {
        let breaker = WordBreaker()
        for (document, hash, text) in texts {
            let words = text.withUnsafeBytes { batch.add(document: document, text: $0, breaker: breaker) }
            documents.append((document, hash, TextStore.record(hash: hash, words: words, text: text), words))
        }
        order = batch.sortedOrder()
    }
}

/// Writes a term's entries as blocks of at most ``TextPostings/blockBytes``, each under its key,
/// in ``TextPostings``' layout.
struct BlockWriter {
    private var prefix: [UInt8]
    private var head: [UInt8] = []
    private var positions: [UInt8] = []
    private var count = 0
    private var first: UInt32 = 0
    private var previous: UInt32 = 0

    init(term: UnsafeRawBufferPointer) { prefix = TextPostings.prefix(term) }

    /// A writer for terms to come, each started with ``reset(term:)``: one for many terms keeps
    /// its buffers' memory.
    init() { prefix = [] }

    /// Starts on another term (the block in progress written or not: call ``finish(_:)`` first),
    /// keeping the buffers' memory for it.
    mutating func reset(term: UnsafeRawBufferPointer) {
        prefix.removeAll(keepingCapacity: true)
        prefix.append(contentsOf: term)
        prefix.append(0)
        head.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        count = 0
    }

    /// Adds one document: its occurrences and the bytes of its positions, as stored.
    mutating func add(_ document: UInt32, _ occurrences: Int, _ positions: UnsafeRawBufferPointer,
                      _ put: ([UInt8], [UInt8]) throws -> Void) rethrows {
        let gap = UInt64(document &- previous)
        if count > 0, Varint.size(UInt64(count + 1)) + head.count + self.positions.count + Varint.size(gap)
            + Varint.size(UInt64(occurrences)) + positions.count > TextPostings.blockBytes {
            try finish(put)
        }
        if count == 0 {
            first = document
            previous = document
        }
        Varint.append(&head, UInt64(document - previous))
        Varint.append(&head, UInt64(occurrences))
        self.positions.append(contentsOf: positions)
        count += 1
        previous = document
    }

    /// Writes the block in progress.
    mutating func finish(_ put: ([UInt8], [UInt8]) throws -> Void) rethrows {
        guard count > 0 else { return }
        var key = prefix
        Postings.appendBE(&key, first)
        var block: [UInt8] = []
        block.reserveCapacity(head.count + positions.count + 3)
        Varint.append(&block, UInt64(count))
        block += head
        block += positions
        try put(key, block)
        head.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        count = 0
    }

    /// Calls `body` with each entry of interleaved entries (a batch's, or a layout-1 block's
    /// after its count): per document its gap, occurrences and positions together. False if
    /// they are malformed.
    @discardableResult
    static func forEachEntry(_ bytes: UnsafeRawBufferPointer, count: Int?, first: UInt32,
                             _ body: (_ document: UInt32, _ occurrences: Int, _ positions: UnsafeRawBufferPointer) throws -> Void) rethrows -> Bool {
        var offset = 0
        var document = first
        var n = 0
        while offset < bytes.count, count.map({ n < $0 }) ?? true {
            guard let gap = Varint.read(bytes, &offset) else { return false }
            guard let tf = Varint.read(bytes, &offset), tf > 0 else { return false }
            let start = offset
            guard tf <= UInt64(bytes.count), TextPostings.skip(bytes, &offset, Int(tf)) else { return false }
            document &+= UInt32(truncatingIfNeeded: gap)
            try body(document, Int(tf), UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
            n += 1
        }
        return true
    }
}
