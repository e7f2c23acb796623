import ThumbcacheLMDB

/// A posting list's key prefix, hashed by its bytes in one call.
struct TermKey: Hashable {
    var bytes: [UInt8]
    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}

/// What one write transaction has changed so far: posting edits, applied per list at the end,
/// so a batch touches each list's chunks once.
struct WriteSession {
    var postings = PostingAccumulator()
    var pendingAttributes: [String: AttributeInfo] = [:]
    var nextItemNumber: UInt32
    let firstNewItemNumber: UInt32
    /// Whether app items point at files (checked once per transaction): with none, new files
    /// need no link lookup.
    var links = LinkState.unknown
    /// `hashes` keys to add (true) or remove, applied in key order at the end of a file batch.
    var hashEdits: [(key: [UInt8], add: Bool)] = []

    enum LinkState { case unknown, none, some }

    init(nextItemNumber: UInt32) {
        self.nextItemNumber = max(1, nextItemNumber)
        firstNewItemNumber = self.nextItemNumber
    }

    mutating func allocate() -> UInt32 {
        defer { nextItemNumber += 1 }
        return nextItemNumber
    }

    /// Adds the lists of a new item nothing links to (nothing to take away).
    mutating func add(_ itemNumber: UInt32, _ record: ItemRecord, _ index: MetadataIndex) {
        var sink = AccumulatorSink(postings: postings, itemNumber: itemNumber)
        postings = PostingAccumulator()
        index.forEachTerm(record, pendingAttributes, &sink)
        postings = sink.postings
    }

    mutating func record(_ itemNumber: UInt32, before: Set<TermKey>, after: Set<TermKey>) {
        for t in after where !before.contains(t) { t.bytes.withUnsafeBytes { postings.add($0, itemNumber) } }
        for t in before where !after.contains(t) { t.bytes.withUnsafeBytes { postings.remove($0, itemNumber) } }
    }
}
