import Synchronization
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheStore
import ThumbcacheWorker

/// Collects file items from the workers and indexes them in batches, one transaction each.
/// Whether a file changed since it was indexed is asked a batch at a time too: one read
/// transaction for 256 files, not one per file.
final class IndexFeeder: Sendable {
    let index: MetadataIndex
    /// Image headers and EXIF are read where the decoders run (a sandboxed worker, as a rule).
    let decoding: any ImageDecoding
    let types: ContentTypeRegistry
    private struct Candidate: Sendable {
        var path: String
        var id: FileIdentity
        var type: ContentType
        /// Held by reference and read only for a file the index lacks: an `ImageInfo` is
        /// hundreds of bytes, copied with each candidate.
        var decoded: DecodedHeader?
        var provisional: Bool
    }
    private let candidates = Mutex<[Candidate]>([])
    /// Indexed files this warm saw: the end of the warm need not look at them again.
    private let seen = Mutex(ItemBitmap())
    private let pending = Mutex<[FileItem]>([])
    private let counts = Mutex(IndexSummary())
    private let provisional = Atomic<Int>(0)
    /// Items indexed provisionally (their worker killed from outside): a later warm should run.
    var provisionalItems: Int { provisional.load(ordering: .relaxed) }
    static let batchSize = 256
    /// Texts waiting to be indexed, and the contents whose words are being read in this warm.
    private let texts = Mutex<(batch: [(content: [UInt8], text: [UInt8])], bytes: Int, reading: Set<ContentHash>)>(([], 0, []))
    /// Texts are indexed 8 MB at a time: one transaction, bounded memory (peak RssAnon of a warm
    /// stays under 150 MB); larger batches rewrite each word's last block less often (Docs/PERFORMANCE.md).
    static let textBatchBytes = 8 << 20

    /// The index's valid words stamps as this warm began (nil: unreadable, nothing vouched).
    let stamps: MetadataIndex.WordsStamps?
    /// This warm's stamp, for the words it reads: valid once they are all committed (``finish(roots:)``).
    let readStamp = UInt64.random(in: 1...UInt64.max)
    /// For words found indexed already: the newest valid stamp, else this warm's.
    let foundStamp: UInt64
    private let readStampUsed = Atomic<Bool>(false)

    /// Which formats have words, as a stamp mixed into every vouch for words: a thumbcache that
    /// reads the words of more formats looks at their files again.
    static let catalogueStamp = ContentHash.of(Array(FormatCatalogue.withWords.map(\.rawValue).sorted().joined(separator: ",").utf8)).low

    init(index: MetadataIndex, decoding: any ImageDecoding, types: ContentTypeRegistry) {
        self.index = index
        self.decoding = decoding
        self.types = types
        stamps = try? index.wordsStamps()
        foundStamp = stamps?.valid.last ?? readStamp
    }

    /// What a file's words need.
    enum Words {
        /// The file's stat entry vouches for them under a stamp still valid.
        case vouched
        /// Indexed already, or the type has none: nothing to read.
        case complete
        /// This file's to read, in this format.
        case read(ImageFormat)
        /// Another file with the same bytes reads them in this warm.
        case readElsewhere
        /// The index could not be asked: nothing read, nothing vouched for.
        case unknown
    }

    /// Queues the file; it is indexed unless the index has it in the same state.
    /// - Parameters:
    ///   - decoded: where a decode of this file left the image header it read, if any.
    ///   - provisional: its decode failed for a reason of the moment; what is indexed of it is
    ///     read again by the next warm.
    func submit(path: String, id: FileIdentity, type: ContentType, decoded: DecodedHeader? = nil, provisional: Bool = false) {
        let batch = candidates.withLock { list -> [Candidate]? in
            list.append(Candidate(path: path, id: id, type: type, decoded: decoded, provisional: provisional))
            guard list.count >= Self.batchSize else { return nil }
            defer { list = [] }
            return list
        }
        if let batch { check(batch) }
    }

    /// Items for the files of `batch` the index does not have as they are now.
    private func check(_ batch: [Candidate]) {
        let states = (try? index.indexedStates(paths: batch.map(\.path))) ?? Array(repeating: nil, count: batch.count)
        var unchanged = 0
        var items: [FileItem] = []
        seen.withLock { bits in for case let (item, _)? in states { bits.insert(item) } }
        for (c, known) in zip(batch, states) {
            if let state = known?.state, state == IndexedFileState(c.id.snapshot) {
                unchanged += 1
                continue
            }
            let item = FileMetadata.item(path: c.path, snapshot: c.id.snapshot, content: c.id.content, type: c.type, types: types,
                                         imageFormat: FormatCatalogue.declaration(ofType: c.type)?.format, decoding: decoding,
                                         decoded: c.decoded?.info, provisional: c.provisional)
            if item.state.isProvisional { provisional.add(1, ordering: .relaxed) }
            items.append(item)
        }
        if unchanged > 0 { counts.withLock { $0.unchanged += unchanged } }
        guard !items.isEmpty else { return }
        let full = pending.withLock { list -> [FileItem]? in
            list += items
            guard list.count >= Self.batchSize else { return nil }
            defer { list = [] }
            return list
        }
        if let full { write(full) }
    }

    /// The format whose words the index wants of this file, now claimed for it (the caller then
    /// gives them with ``addWords(content:_:)``, read along with its thumbnail or on their own);
    /// nil when the type has none, or the content's are indexed already or being read. A file
    /// whose words cannot be read gets an empty text, so the same bytes are not tried again: a
    /// PDF that wedges a worker costs one timeout, once.
    func claimWords(id: FileIdentity, type: ContentType) -> Words {
        // The stat entry saw them complete under a stamp still valid: no look-up (a fifth of a
        // re-warm of text files, PERFORMANCE.md).
        if let stamps, let vouched = id.cachedVouch?.words, vouched != 0, stamps.valid.contains(vouched ^ Self.catalogueStamp) { return .vouched }
        guard let format = Self.wordsFormat(of: type, types: types) else { return .complete }
        let content = id.content
        // The index first: on a re-warm every content has its words, and a set of them all would
        // cost more than the look-up (two files of the same new bytes still meet in the set).
        switch try? index.hasText(content: content.bytes) {
        case true?: return .complete
        case nil: return .unknown
        case false?: break
        }
        guard texts.withLock({ $0.reading.insert(content).inserted }) else { return .readElsewhere }
        return .read(format)
    }

    /// The format whose words a file of `type` has, if it has any.
    static func wordsFormat(of type: ContentType, types: ContentTypeRegistry) -> ImageFormat? {
        if types.conforms(type, to: .text) { return .text }
        guard let declared = FormatCatalogue.declaration(ofType: type)?.format, FormatCatalogue.withWords.contains(declared) else { return nil }
        return declared
    }

    /// What a stat entry may vouch for `words` (nil: what it says already), in ``StatVouch/words``.
    func vouch(_ words: Words) -> UInt64? {
        guard stamps != nil else { return 0 }
        switch words {
        case .vouched: return nil
        case .unknown: return 0
        case .complete:
            if foundStamp == readStamp { readStampUsed.store(true, ordering: .relaxed) }
            return foundStamp ^ Self.catalogueStamp
        case .read, .readElsewhere:
            readStampUsed.store(true, ordering: .relaxed)
            return readStamp ^ Self.catalogueStamp
        }
    }

    /// Queues the words of a claimed content.
    func addWords(content: ContentHash, _ words: String) {
        let full = texts.withLock { state -> [(content: [UInt8], text: [UInt8])]? in
            state.batch.append((content.bytes, Array(words.utf8)))
            state.bytes += words.utf8.count + 64
            guard state.bytes >= Self.textBatchBytes else { return nil }
            defer { state.batch = []; state.bytes = 0 }
            return state.batch
        }
        if let full { writeTexts(full) }
    }

    private func writeTexts(_ batch: [(content: [UInt8], text: [UInt8])]) {
        do {
            let added = try index.indexTexts(batch)
            counts.withLock { $0.texts += added }
        } catch {
            failed(error.description)
        }
    }

    func flush() {
        let pendingTexts = texts.withLock { state in
            defer { state.batch = []; state.bytes = 0 }
            return state.batch
        }
        if !pendingTexts.isEmpty { writeTexts(pendingTexts) }
        let rest = candidates.withLock { list in
            defer { list = [] }
            return list
        }
        if !rest.isEmpty { check(rest) }
        let batch = pending.withLock { list in
            defer { list = [] }
            return list
        }
        if !batch.isEmpty { write(batch) }
    }

    private func write(_ batch: [FileItem]) {
        do {
            let outcomes = try index.indexFiles(batch)
            counts.withLock { c in
                for o in outcomes {
                    switch o {
                    case .added: c.added += 1
                    case .updated: c.updated += 1
                    case .moved: c.moved += 1
                    case .unchanged: c.unchanged += 1
                    }
                }
            }
        } catch {
            failed(error.description)
        }
    }

    /// Writes what is pending, drops indexed files under `roots` that are gone, and says what was done.
    func finish(roots: [String]) -> IndexSummary {
        flush()
        // Every text read is committed: what was vouched for under this warm's stamp holds.
        if let stamps, readStampUsed.load(ordering: .relaxed), summary.errors.isEmpty {
            _ = try? index.confirmWords(readStamp, since: stamps)
        }
        do {
            removed(try index.removeMissingFiles(under: roots, except: seen.withLock { $0 }))
        } catch {
            failed(error.description)
        }
        return summary
    }

    func removed(_ n: Int) { counts.withLock { $0.removed += n } }
    func failed(_ reason: String) { counts.withLock { $0.errors.append(reason) } }
    var summary: IndexSummary { counts.withLock { $0 } }
}
