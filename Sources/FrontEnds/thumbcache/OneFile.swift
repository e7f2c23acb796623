import Glibc
import Thumbcache
import ThumbcacheWorker

/// One file's thumbnail in a process made for it (a `get`, the plug-in's call). A stored one is
/// looked for first, with nothing else set up; on a miss the file's worker is started (forked,
/// for a document) before the providers and content types are made, so that its start overlaps
/// them. For a file whose bytes name its format they are the built-in ones alone; another reads
/// shared-mime-info's database and the installed plug-ins.
enum OneFile {
    /// Hands `request`'s stored thumbnail to `deliver` and returns true; false on a miss.
    /// Synchronous, so that a process made for one file answers a hit on its main thread before
    /// its first `await`, which would start a thread of the concurrency pool.
    static func stored(_ request: ThumbnailRequest, in store: ThumbnailStore, deliver: (ThumbnailRepresentation) throws -> Void) throws -> Bool {
        guard let hit = try CacheHit.thumbnail(for: request, in: store) else { return false }
        try deliver(hit)
        return true
    }

    /// After a miss (``stored(_:in:deliver:)``), hands `request`'s representation to `deliver`
    /// (which writes it out), then ends the process if the representation was made here; one from
    /// the cache returns, to the usual way out. `prepared` is the file's decoding, set up before
    /// the first `await` (``prepared(forFileAt:isolation:)``).
    static func representation(_ request: ThumbnailRequest, store: ThumbnailStore, prepared: Prepared,
                               standardThumbnails: FreedesktopThumbnailCache?,
                               providers: (inout ContentTypeRegistry) -> [any ThumbnailProvider],
                               deliver: (ThumbnailRepresentation) throws -> Void) async throws {
        // Without waiting for the worker's exit (a millisecond or two with poppler or FFmpeg
        // mapped), which nothing after the output needs.
        defer { prepared.decoding.hangUpIdleWorkers() }
        // A file whose bytes name a catalogued format is thumbcache's to decode (a built-in
        // decoder wins over any plug-in) and typed by its bytes: neither shared-mime-info's
        // database nor the plug-ins are read, which would come between the worker and its request.
        var types = ContentTypeRegistry.catalogued
        var chosen: [any ThumbnailProvider] = [ImageThumbnailProvider.formatsOnly]
        if prepared.format == nil {
            types = ContentTypeRegistry()
            chosen = providers(&types)
        }
        let generator = ThumbnailGenerator(store: store, providers: chosen, types: types, decoding: prepared.decoding,
                                           standardThumbnails: standardThumbnails, remote: nil)
        let representation = try await generator.bestRepresentation(for: request)
        try deliver(representation)
        // What a thumbnail made here stored was committed before it came back (the pipeline awaits
        // its writes); the rest is tearing down threads, the worker's channel and the store, which
        // the exit does faster (PERFORMANCE.md). A hit's access stamp is only queued, so a
        // representation from the cache takes the usual way out.
        if !representation.fromCache { exit(0) }
    }

    /// A one-file call's decoding service, its family's worker already starting, and the format
    /// the file's first bytes name (read once, for the worker and for the file's types).
    struct Prepared: Sendable {
        let decoding: any ImageDecoding
        let format: ImageFormat?
    }

    /// The file's decoding, its worker started. Called before the process's first `await`, on its
    /// only thread, where a family that `isolation` forks (a documents worker, for `thumbcache`)
    /// is forked at once; after it, a thread of the concurrency pool would make that a spawn.
    static func prepared(forFileAt path: String, isolation: DecoderIsolation) -> Prepared {
        let decoding = isolation.makeDecoding(defaultWorkers: 1)
        let format = ImageDecoders.catalogue.format(ofFileAt: path)
        if let format { decoding.prepare(forFileAt: path, format: format) }
        return Prepared(decoding: decoding, format: format)
    }
}
