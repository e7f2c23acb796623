import Thumbcache

/// One file's thumbnail in a process made for it (a `get`, the plug-in's call). A stored one is
/// looked for first, with nothing else set up; on a miss the file's worker is started before the
/// providers and content types are made (they read shared-mime-info's database and the installed
/// plug-ins), so that its start overlaps them.
enum OneFile {
    static func representation(_ request: ThumbnailRequest, store: ThumbnailStore, isolation: DecoderIsolation,
                               standardThumbnails: FreedesktopThumbnailCache?,
                               providers: (inout ContentTypeRegistry) -> [any ThumbnailProvider]) async throws -> ThumbnailRepresentation {
        if request.representationTypes.contains(.thumbnail), let hit = try CacheHit.thumbnail(for: request, in: store) { return hit }
        let decoding = isolation.makeDecoding(defaultWorkers: 1)
        decoding.prepare(forFileAt: request.path)
        var types = ContentTypeRegistry()
        let providers = providers(&types)
        let generator = ThumbnailGenerator(store: store, providers: providers, types: types, decoding: decoding,
                                           standardThumbnails: standardThumbnails, remote: nil)
        return try await generator.bestRepresentation(for: request)
    }
}
