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
        let failureVersion = factory.failureVersion(for: type)
        let fileEntry = StoreWrite.file(path: request.path, snapshot: id.snapshot, content: id.content)
        let pagedByWords = Self.pagedByWords.contains(type.identifier)
        // A recorded failure is of the first page (the thumbnail's). A document of words without
        // a stored picture (an e-book without a cover) starts with its words instead: its page N
        // is the decoder's page N + 1, whose page 1 is the first page of words.
        var wordsOnly = false
        if spec.page == 0 || pagedByWords, let record = try await blocking({ [factory] in try factory.store.failure(content: id.content, generatorVersion: failureVersion) }) {
            if pagedByWords && record.kind == .noPicture {
                wordsOnly = true
            } else if spec.page == 0 {
                throw GenerationError(path: request.path, reason: .failedBefore(record))
            }
        }
        if pagedByWords, !wordsOnly, spec.page > 0 {
            // Whether it has a picture is known by drawing its page 1, kept for the next look.
            var first = spec
            first.page = 0
            do {
                _ = try await rendered(request.path, first, type: type, content: id.content, fileEntry: fileEntry, key: first.key(for: id.content, kind: .preview),
                                       recordingAs: failureVersion)
            } catch let error as ImagingError {
                guard case .noPicture = error.reason else { throw error }
                wordsOnly = true
            }
        }
        var drawn = spec
        if wordsOnly { drawn.page += 1 }
        do {
            return try await rendered(request.path, drawn, type: type, content: id.content, fileEntry: fileEntry, key: key,
                                      recordingAs: spec.page == 0 ? failureVersion : nil)
        } catch let error as ImagingError where !wordsOnly && spec.page == 0 && pagedByWords {
            guard case .noPicture = error.reason else { throw error }
            drawn.page = 1
            return try await rendered(request.path, drawn, type: type, content: id.content, fileEntry: fileEntry, key: key, recordingAs: nil)
        } catch let error as ImagingError where wordsOnly {
            // Counted without the picture the decoder counts as its page 1.
            guard case .noSuchPage(_, let pages) = error.reason else { throw error }
            throw ImagingError(path: error.path, reason: .noSuchPage(page: spec.page + 1, pages: max(1, pages - 1)))
        }
    }

    /// `spec`'s page drawn by the file's provider, stored under `key` and returned. A failure
    /// caused by the bytes is remembered under the failure version `recordingAs`, when given: a
    /// first page's is, as a thumbnail's is, so neither is tried again; a later page's (a video's
    /// key frame near a damaged end) says nothing of the first.
    private func rendered(_ path: String, _ spec: ThumbnailSpec, type: ContentType, content: ContentHash, fileEntry: StoreWrite, key: ThumbnailKey,
                          recordingAs failureVersion: UInt32?) async throws -> ThumbnailRepresentation {
        let factory = self.factory, decoding = self.decoding
        let (header, bytes): (ThumbnailHeader, [UInt8])
        do {
            (header, bytes) = try await blocking {
                let image = try factory.render(path: path, type: type, spec: spec, decoding: decoding)
                return try factory.encodePreview(image, spec: spec, sourceType: type)
            }
        } catch {
            if let failureVersion, ThumbnailPipeline.isContentFault(error) {
                let record = FailureRecord(kind: ThumbnailPipeline.kind(error), reason: ThumbnailPipeline.reason(error),
                                           created: StoreClock.nowNanoseconds())
                try? await writer.submit([fileEntry, .failure(content: content, generatorVersion: failureVersion, record)])
            }
            throw error
        }
        try await writer.submit([fileEntry, .thumbnail(key, header, data: bytes)])
        budget?.added(bytes.count)
        return ThumbnailRepresentation(kind: .preview, header: header, data: bytes, box: spec, fromCache: false)
    }
}
