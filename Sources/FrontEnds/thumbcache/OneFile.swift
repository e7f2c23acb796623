import Thumbcache
import ThumbcacheDaemon
import ThumbcacheWorker

/// One file's thumbnail in a process made for it (a `get`, the plug-in's call). A stored one is
/// looked for first, with nothing else set up; on a miss the file's worker is started before the
/// providers and content types are made, so that its start overlaps them. For a file whose bytes
/// name its format they are the built-in ones alone; another reads shared-mime-info's database
/// and the installed plug-ins.
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
    /// (which writes it out; true when the session's daemon made it) before the worker is let go,
    /// without waiting for it to end: the process exits next. With `askingDaemon`, the daemon
    /// serving the same store (if one answers) is asked before anything starts here.
    static func representation(_ request: ThumbnailRequest, store: ThumbnailStore, isolation: DecoderIsolation,
                               standardThumbnails: FreedesktopThumbnailCache?, askingDaemon: Bool = false,
                               providers: (inout ContentTypeRegistry) -> [any ThumbnailProvider],
                               deliver: (ThumbnailRepresentation, _ fromDaemon: Bool) throws -> Void) async throws {
        if askingDaemon, let answer = SessionSocket.ask(request, storeDirectory: store.directory) { return try deliver(answer, true) }
        let (decoding, format) = prepared(forFileAt: request.path, isolation: isolation)
        // Without waiting for the worker's exit (a millisecond or two with poppler or FFmpeg
        // mapped), which nothing after the output needs.
        defer { decoding.hangUpIdleWorkers() }
        // A file whose bytes name a catalogued format is thumbcache's to decode (a built-in
        // decoder wins over any plug-in) and typed by its bytes: neither shared-mime-info's
        // database nor the plug-ins are read, which would come between the worker and its request.
        var types = ContentTypeRegistry.catalogued
        var chosen: [any ThumbnailProvider] = [ImageThumbnailProvider.formatsOnly]
        if format == nil {
            types = ContentTypeRegistry()
            chosen = providers(&types)
        }
        let generator = ThumbnailGenerator(store: store, providers: chosen, types: types, decoding: decoding,
                                           standardThumbnails: standardThumbnails, remote: nil)
        try deliver(try await generator.bestRepresentation(for: request), false)
    }

    /// The decoding service for one file, its family's worker already starting, and the format
    /// the file's first bytes name (read once, for the worker and for the file's types).
    static func prepared(forFileAt path: String, isolation: DecoderIsolation) -> (decoding: any ImageDecoding, format: ImageFormat?) {
        let decoding = isolation.makeDecoding(defaultWorkers: 1)
        let format = ImageDecoders.catalogue.format(ofFileAt: path)
        if let format { decoding.prepare(forFileAt: path, format: format) }
        return (decoding, format)
    }
}
