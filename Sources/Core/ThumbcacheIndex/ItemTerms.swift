/// Term extraction: the posting lists an item belongs in, told to a ``TermSink`` (a set for
/// before/after diffs, or straight into the accumulator for new items).
enum ItemTerms {
    /// The lists of the path of an item of `kind`: `kMDItemPath`'s existence list and the lists
    /// of the directories ``forEachDirectory(_:of:_:)`` names.
    static func pathTerms<Sink: TermSink>(_ path: String, of kind: ItemRecord.Kind, _ sink: inout Sink) {
        sink.exists(Schema.pathID)
        var path = path
        path.withUTF8 { bytes in
            forEachDirectory(bytes, of: kind) { end in sink.term(.directory, Schema.pathID, directoryTerm(bytes, end)) }
        }
    }

    /// Whether an item with a path of `pathBytes` bytes is in its own directory's list. A file
    /// whose `ids` key is its path is not: a directory's own files are read from `ids`
    /// (``QueryExecutor/forEachFile(directlyIn:_:_:)``), which spares a bulk load a list per directory. App
    /// items and files with hashed keys are.
    static func listsOwnDirectory(_ kind: ItemRecord.Kind, pathBytes: Int) -> Bool {
        kind != .file || pathBytes > MetadataIndex.maxPlainKeyBytes
    }

    /// Calls `body` with the end (the position of the slash after it) of each directory of an
    /// absolute path whose list holds an item of `kind` at that path: every ancestor but "/"
    /// (which holds everything: the existence list), and but its own directory unless
    /// ``listsOwnDirectory(_:pathBytes:)``.
    @inline(__always) static func forEachDirectory(_ path: UnsafeBufferPointer<UInt8>, of kind: ItemRecord.Kind, _ body: (Int) -> Void) {
        var end = path.count
        if !listsOwnDirectory(kind, pathBytes: path.count) {
            while end > 0 && path[end - 1] != UInt8(ascii: "/") { end -= 1 }
            end -= 1  // the slash after the own directory
        }
        for i in 1..<max(1, end) where path[i] == UInt8(ascii: "/") { body(i) }
    }

    /// The list term of the directory ending at `end` (cut to a term's length).
    static func directoryTerm(_ path: UnsafeBufferPointer<UInt8>, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: path[0..<min(end, TextFolding.maxTermBytes)])
    }

    /// The lists of one attribute value; `folded` is scratch space.
    static func valueTerms<Sink: TermSink>(_ info: AttributeInfo, _ value: AttributeValue, _ folded: inout [UInt8], _ sink: inout Sink) {
        let id = info.id
        sink.exists(id)
        switch value {
        case .string(let string):
            stringTerms(string, id, info.policy, markExact: false, &folded, &sink)
        case .strings(let strings):
            let marked = info.policy.contains(.values) ? foldedTwins(strings) : []
            for (k, string) in strings.enumerated() {
                stringTerms(string, id, info.policy, markExact: marked.contains(k), &folded, &sink)
            }
        case .number(let n), .date(let n):
            if info.policy.contains(.numeric), !n.isNaN { sink.number(id, info.buckets.bucket(n)) }
        }
    }

    /// The lists of one string value of attribute `id`; `folded` is scratch space.
    private static func stringTerms<Sink: TermSink>(_ string: String, _ id: UInt16, _ policy: IndexPolicy, markExact: Bool,
                                                    _ folded: inout [UInt8], _ sink: inout Sink) {
        let changed = TextFolding.fold(string, into: &folded)
        if policy.contains(.values) {
            if folded.count <= TextFolding.maxTermBytes && !folded.contains(0) {
                sink.term(.value, id, folded)
            } else {
                sink.term(.value, id, folded.prefix(TextFolding.maxTermBytes).filter { $0 != 0 })
            }
            if changed || markExact { sink.term(.exactValue, id, TextFolding.exactTerm(folded: folded, raw: string)) }
        }
        if policy.contains(.words) {
            TextFolding.forEachWord(string, folded: folded) { sink.term(.word, id, $0.prefix(TextFolding.maxTermBytes)) }
        }
        if policy.contains(.trigrams) {
            if folded.contains(where: { $0 >= 0x80 }) {
                for t in TextFolding.trigrams(ofFolded: String(decoding: folded, as: UTF8.self)) { sink.term(.trigram, id, t) }
            } else {
                TextFolding.forEachASCIITrigram(folded) { sink.trigram(id, $0, $1, $2) }
            }
        }
    }

    /// Positions in a list of values that folding leaves unchanged while another value of the
    /// list folds to the same text ("work" next to "Work"): they need an exact term too, which
    /// the exact query cannot tell from the variant otherwise.
    static func foldedTwins(_ strings: [String]) -> Set<Int> {
        guard strings.count > 1 else { return [] }
        var scratch: [UInt8] = []
        guard strings.contains(where: { TextFolding.fold($0, into: &scratch) }) else { return [] }
        let all = strings.map(TextFolding.foldedBytes)
        var marked: Set<Int> = []
        for k in strings.indices where all[k].elementsEqual(strings[k].utf8) {
            if all.indices.contains(where: { $0 != k && all[$0] == all[k] && !all[$0].elementsEqual(strings[$0].utf8) }) { marked.insert(k) }
        }
        return marked
    }
}

/// Receives the posting lists of an item.
protocol TermSink {
    mutating func exists(_ attribute: UInt16)
    /// An ASCII trigram (bytes below 0x80; 1 and 2 are the start and end pads).
    mutating func trigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8)
    mutating func number(_ attribute: UInt16, _ bucket: UInt32)
    mutating func term(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>)
}

/// Collects the key prefixes as a set (for diffs on updates and deletions).
struct TermSetSink: TermSink {
    var terms: Set<TermKey> = []
    mutating func exists(_ attribute: UInt16) { terms.insert(TermKey(bytes: Postings.prefix(.exists, attribute, []))) }
    mutating func trigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8) {
        terms.insert(TermKey(bytes: Postings.prefix(.trigram, attribute, [a, b, c])))
    }
    mutating func number(_ attribute: UInt16, _ bucket: UInt32) {
        terms.insert(TermKey(bytes: Postings.prefix(.number, attribute, NumericKey.term(bucket))))
    }
    mutating func term(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>) {
        terms.insert(TermKey(bytes: Postings.prefix(kind, attribute, Array(term))))
    }
}

/// Adds a new item straight to the accumulator (the bulk path: nothing to diff against).
struct AccumulatorSink: TermSink {
    var postings: PostingAccumulator
    var itemNumber: UInt32

    mutating func exists(_ attribute: UInt16) { postings.addExists(attribute, itemNumber) }
    mutating func trigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8) { postings.addTrigram(attribute, a, b, c, itemNumber) }
    mutating func number(_ attribute: UInt16, _ bucket: UInt32) { postings.addNumber(attribute, bucket, itemNumber) }
    mutating func term(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>) {
        postings.add(kind, attribute, term, itemNumber)
    }
}
