import Synchronization
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheStore
import ThumbcacheWorker

/// Collects file items from the workers and indexes them in batches, one transaction each.
final class IndexFeeder: Sendable {
    let index: MetadataIndex
    /// Image headers and EXIF are read where the decoders run (a sandboxed worker, as a rule).
    let decoding: any ImageDecoding
    private let pending = Mutex<[FileItem]>([])
    private let counts = Mutex(IndexSummary())
    static let batchSize = 256

    init(index: MetadataIndex, decoding: any ImageDecoding) {
        self.index = index
        self.decoding = decoding
    }

    /// Queues the file's item unless the index has it in the same state.
    /// - Parameter decoded: the image header a decode of this file already read, if any.
    func submit(path: String, id: FileIdentity, type: ContentType, types: ContentTypeRegistry, decoded: ImageInfo? = nil) {
        let s = id.snapshot
        if let known = try? index.indexedState(path: path), known == IndexedFileState(s) {
            counts.withLock { $0.unchanged += 1 }
            return
        }
        let format = ImageFormatSignature.format(ofType: type.identifier)
        let item = FileMetadata.item(path: path, snapshot: s, content: id.content, type: type, types: types, imageFormat: format,
                                     decoding: decoding, decoded: decoded)
        let batch = pending.withLock { list -> [FileItem]? in
            list.append(item)
            guard list.count >= Self.batchSize else { return nil }
            defer { list = [] }
            return list
        }
        if let batch { write(batch) }
    }

    func flush() {
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
        do {
            removed(try index.removeMissingFiles(under: roots))
        } catch {
            failed(error.description)
        }
        return summary
    }

    func removed(_ n: Int) { counts.withLock { $0.removed += n } }
    func failed(_ reason: String) { counts.withLock { $0.errors.append(reason) } }
    var summary: IndexSummary { counts.withLock { $0 } }
}
