import Dispatch
import ThumbcacheImaging
import ThumbcacheRemote
import ThumbcacheStore
import ThumbcacheWorker

/// A file's way through a warm before and after it is made: identified (and, with a remote
/// tier, looked up with a few others in one batch), then committed and counted.
extension Warmer {
    /// Files whose keys a worker asks the remote tier for at once.
    static let lookupBatch = 16

    /// A file identified, or the outcome that ends it (it could not be read).
    enum Identification {
        case known(Identified)
        case unknown(Outcome)
    }

    /// A file identified by content, with its type and the stat-cache write that keeps them.
    struct Identified {
        var path: String
        var id: FileIdentity
        var type: ContentType
        var writes: [StoreWrite]
    }

    /// Identifies the file (the stat cache, else its hash) and its type: the type the stat cache
    /// keeps, while the registry is the one that detected it (a re-warm of an unchanged file
    /// opens nothing), else detected now, and kept.
    static func identify(_ path: String, snapshot: FileSnapshot?, factory: ThumbnailFactory, hasher: ContentHasher) -> Identification {
        var id: FileIdentity
        do {
            id = try snapshot.map { try factory.store.identify(fileAt: path, snapshot: $0, hasher: hasher) }
                ?? factory.store.identify(fileAt: path, hasher: hasher)
        } catch let error as FileError {
            return .unknown(.failed(error.path, error.reason.description))
        } catch {
            return .unknown(.failed(path, "\(error)"))
        }
        if let cached = id.cachedType, cached.registryStamp == factory.typeStamp {
            return .known(Identified(path: path, id: id, type: ContentType(cached.identifier), writes: []))
        }
        id.cachedVouch = nil  // it was for the type detected before
        let type = factory.types.type(ofFileAt: path)
        return .known(Identified(path: path, id: id, type: type, writes: [
            .file(path: path, snapshot: id.snapshot, content: id.content, type: CachedContentType(identifier: type.identifier, registryStamp: factory.typeStamp)),
        ]))
    }

    /// Keeps `vouch` in the file's stat entry: in the entry its writes already make, else in one
    /// more (the file is unchanged since its entry, so it is that entry with the vouch). Nothing
    /// is written when the entry says it already.
    static func vouch(_ vouch: StatVouch, for file: Identified, in writes: inout [StoreWrite]) {
        if let i = writes.firstIndex(where: { if case .file = $0 { true } else { false } }), case .file(let path, var entry) = writes[i] {
            entry.vouch = vouch
            writes[i] = .file(path: path, entry)
        } else if file.id.cachedVouch != vouch, let type = file.id.cachedType {
            writes.append(.file(path: file.path, snapshot: file.id.snapshot, content: file.id.content, type: type, vouch: vouch))
        }
    }

    /// Asks the remote tier, in one batch, for the thumbnails the cache lacks of the files
    /// that have a provider.
    static func lookUp(_ files: [Identification], remote: RemoteCache, factory: ThumbnailFactory, decoding: any ImageDecoding, options: Options)
        -> [ThumbnailKey: (RemoteThumbnail, RGBAImage)]
    {
        let pipeline = ThumbnailPipeline(factory: factory, decoding: decoding)
        var keys: [ThumbnailKey] = []
        for case .known(let file) in files {
            guard case .success(let specs) = pipeline.plan(type: file.type, specs: options.specs) else { continue }
            keys += specs.map { $0.key(for: file.id.content) }.filter { (try? factory.store.containsThumbnail($0)) != true && !keys.contains($0) }
        }
        var found: [ThumbnailKey: (RemoteThumbnail, RGBAImage)] = [:]
        for (key, answer) in zip(keys, remote.fetch(keys)) { found[key] = answer }
        return found
    }
}

/// Hands one file's records to the writer as one group and counts the file.
struct FileCommitter: Sendable {
    let writer: GroupCommitWriter
    let tally: Tally
    /// Groups queued and not yet committed, at most 256.
    let inFlight: DispatchSemaphore
    let exporting: Exporting?
    let uploader: RemoteUploader?
    let progress: (@Sendable (WarmProgress) -> Void)?

    func commit(_ path: String, _ result: (Warmer.Outcome, [StoreWrite], FreedesktopExporter.Job?)) {
        let (outcome, writes, export) = result
        // Counted before its records are queued, so that a failed commit can move it to
        // "failed" instead of counting the file twice.
        let counts = tally.record(outcome)  // always: `progress?(…)` would skip it when nil
        if !writes.isEmpty {
            inFlight.wait()
            let queuesUpload = writes.contains { if case .queueUpload = $0 { true } else { false } }
            writer.enqueue(writes) { [tally, inFlight, exporting, uploader] result in
                switch result {
                case .failure(let error): tally.reclassify(outcome, asFailed: path, reason: error.description)
                case .success:
                    if let export { exporting?.submit(export, after: outcome) }
                    if queuesUpload { uploader?.nudge() }
                }
                inFlight.signal()
            }
        } else if let export {
            exporting?.submit(export, after: outcome)
        }
        progress?(counts)
    }
}
