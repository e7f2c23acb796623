import ThumbcacheStore

/// A stored thumbnail served with nothing else set up: no providers, no content types (which
/// read shared-mime-info's database), no plug-ins, no workers. A process started for one file
/// (the plug-in's call, a `get`) tries this first, since a cache hit needs none of them.
package enum CacheHit {
    /// Minutes within which a second hit leaves the access stamp as it is: eviction orders
    /// thumbnails unused for days, and an hour's error does not change which go.
    package static let accessResolution: UInt32 = 60

    /// The stored thumbnail of `request`'s file for its box (its preview, when that is what it
    /// asks), or nil (not stored, the file changed or cannot be read: the generator's way says
    /// why); a hit is recorded for eviction, unless one was within ``accessResolution``.
    package static func thumbnail(for request: ThumbnailRequest, in store: ThumbnailStore) throws -> ThumbnailRepresentation? {
        let kind: RepresentationKind
        switch request.representationTypes {
        case let types where types.contains(.thumbnail): kind = .thumbnail
        case .preview where (0..<Int(ThumbnailVariant.pageLimit)).contains(request.page): kind = .preview
        default: return nil
        }
        let spec = kind == .preview ? request.previewSpec : request.spec
        guard let snapshot = try? FileSnapshot.of(path: request.path),
              let (key, record) = try store.withCachedThumbnail(
                  path: request.path, snapshot: snapshot, boxWidth: UInt32(spec.boxWidth), boxHeight: UInt32(spec.boxHeight),
                  variant: spec.variant(kind), { (spec.key(for: $0, kind: kind), $1.copy()) })
        else { return nil }
        // A commit is a flush, a rotation on a spinning disk, in a process made for one file:
        // the stamp is written again only when it is older than eviction needs to tell apart.
        let now = currentMinute()
        let last = try? store.lastAccess(of: key)
        if last.map({ $0 > now || now - $0 >= accessResolution }) ?? true {
            try store.apply([.accessed(key, minute: now)])
        }
        return ThumbnailRepresentation(kind: kind, header: record.header, data: record.data, box: spec, fromCache: true)
    }
}
