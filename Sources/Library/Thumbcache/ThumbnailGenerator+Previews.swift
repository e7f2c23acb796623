import ThumbcacheImaging
import ThumbcacheStore

/// Previews (Quick Look's large look at one page, Docs/MEDIA.md): looked up, else made by the
/// file's provider at the box's size and stored like a thumbnail.
extension ThumbnailGenerator {
    /// Types whose pages after the first are their words (office files, e-books): how many there
    /// are is known only by laying them out, so a pager offers the next page until there is none.
    package static let pagedByWords: Set<String> = Set(FormatCatalogue.archiveDocuments
        .filter { FormatCatalogue.withWords.contains($0.format) }.map(\.typeIdentifier))

    func preview(for request: ThumbnailRequest, _ resolved: Resolved) async throws -> ThumbnailRepresentation {
        try checkCancelled(request)
        let spec = request.previewSpec
        let id = resolved.identity
        let key = spec.key(for: id.content, kind: .preview)
        let store = factory.store
        let cached = resolved.kind == .preview ? resolved.cached : try await blocking { try store.thumbnail(key) }
        return try await served(request, id: id, key: key, box: spec, cached: cached) { [self] in
            try await generatePreview(request, id: id, key: key)
        }
    }

    /// Makes, stores and returns the preview under `key`: the page drawn at the box's size by the
    /// file's provider, never from the remote tier (previews are made where they are looked at).
    private func generatePreview(_ request: ThumbnailRequest, id: FileIdentity, key: ThumbnailKey) async throws -> ThumbnailRepresentation {
        let spec = request.previewSpec
        let type = try contentType(of: request)
        guard factory.provider(for: type) != nil else { throw GenerationError(path: request.path, reason: .noProvider(type)) }
        let factory = self.factory, decoding = self.decoding
        let failureVersion = factory.failureVersion(for: type)
        // A recorded failure is of the first page (the thumbnail's): an office file without a
        // stored picture still has the pages of its words.
        if spec.page == 0, let record = try await blocking({ try factory.store.failure(content: id.content, generatorVersion: failureVersion) }) {
            throw GenerationError(path: request.path, reason: .failedBefore(record))
        }
        let fileEntry = StoreWrite.file(path: request.path, snapshot: id.snapshot, content: id.content)
        let (header, bytes): (ThumbnailHeader, [UInt8])
        do {
            (header, bytes) = try await blocking {
                let image = try factory.render(path: request.path, type: type, spec: spec, decoding: decoding)
                return try factory.encodePreview(image, spec: spec, sourceType: type)
            }
        } catch {
            // Bad bytes are remembered as a thumbnail's failure is, so neither is tried again; a
            // later page's (a video's key frame near a damaged end) says nothing of the first.
            if spec.page == 0, ThumbnailPipeline.isContentFault(error) {
                let record = FailureRecord(kind: ThumbnailPipeline.kind(error), reason: ThumbnailPipeline.reason(error),
                                           created: StoreClock.nowNanoseconds())
                try? await writer.submit([fileEntry, .failure(content: id.content, generatorVersion: failureVersion, record)])
            }
            throw error
        }
        try await writer.submit([fileEntry, .thumbnail(key, header, data: bytes)])
        budget?.added(bytes.count)
        return ThumbnailRepresentation(kind: .preview, header: header, data: bytes, box: spec, fromCache: false)
    }
}
