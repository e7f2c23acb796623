import FoundationEssentials
import Glibc
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheStore
import ThumbcacheWorker

/// What `org.freedesktop.thumbnails.Cache1` asks of a thumbnail service when a file manager has
/// moved, copied or deleted files: the standard thumbnails follow (renamed to their new URI's
/// MD5 with `Thumb::URI` rewritten in place, never decoded), and so do thumbcache's stat cache and
/// metadata index — a move stays a move there too.
package struct StandardCacheOperations: Sendable {
    package let cache: FreedesktopThumbnailCache
    package let store: ThumbnailStore
    package let index: MetadataIndex?
    package let types: ContentTypeRegistry
    /// Reads the header of a file the index learns of (a copy's).
    package let decoding: any ImageDecoding

    package init(cache: FreedesktopThumbnailCache, store: ThumbnailStore, index: MetadataIndex?, types: ContentTypeRegistry,
                 decoding: any ImageDecoding) {
        self.cache = cache
        self.store = store
        self.index = index
        self.types = types
        self.decoding = decoding
    }

    /// Each file moved from `from[i]` to `to[i]` (URIs); returns how many thumbnails followed.
    /// `failed` hears why the stat cache or the index could not be written (a full disk).
    @discardableResult
    package func move(from: [String], to: [String], keepOriginal: Bool = false, failed: (String) -> Void = { _ in }) -> Int {
        var moved = 0
        var storeWrites: [StoreWrite] = []
        var items: [FileItem] = []
        for (old, new) in zip(from, to) {
            let oldName = FreedesktopThumbnailCache.name(forURI: old), newName = FreedesktopThumbnailCache.name(forURI: new)
            for folder in cache.thumbnailFolders {
                guard let bytes = FileManager.default.contents(atPath: folder + "/" + oldName),
                    let rewritten = PNGText.replacing([("Thumb::URI", new)], in: Array(bytes)),
                    (try? FreedesktopThumbnailCache.writeAtomically(rewritten, to: folder + "/" + newName)) != nil
                else { continue }
                if !keepOriginal { unlink(folder + "/" + oldName) }
                moved += 1
            }
            guard let oldPath = FileURI.path(of: old), let newPath = FileURI.path(of: new) else { continue }
            // The stat entry goes with the file when the new path is the same file, unchanged.
            if let entry = try? store.fileEntry(path: oldPath), let now = try? FileSnapshot.of(path: newPath), entry.snapshot.sameContentAs(now) {
                if !keepOriginal { storeWrites.append(.removeFile(path: oldPath)) }
                storeWrites.append(.file(path: newPath, snapshot: now, content: entry.content))
                // The index sees the new path with the content of a path that is gone: a move, same item.
                if let index, (try? index.item(path: oldPath)) != nil {
                    let type = types.type(ofFileAt: newPath)
                    items.append(FileMetadata.item(path: newPath, snapshot: now, content: entry.content, type: type, types: types,
                                                   imageFormat: FormatCatalogue.declaration(ofType: type)?.format, decoding: decoding))
                }
            }
        }
        do {
            if !storeWrites.isEmpty { try store.apply(storeWrites) }
        } catch {
            failed(error.description)
        }
        do {
            if !items.isEmpty { _ = try index?.indexFiles(items) }
        } catch {
            failed(error.description)
        }
        return moved
    }

    /// The thumbnails, stat entries and index entries of `uris`, removed; `failed` as for a move.
    @discardableResult
    package func delete(_ uris: [String], failed: (String) -> Void = { _ in }) -> Int {
        var removed = 0
        for uri in uris {
            let name = FreedesktopThumbnailCache.name(forURI: uri)
            for folder in cache.thumbnailFolders where unlink(folder + "/" + name) == 0 { removed += 1 }
        }
        let paths = uris.compactMap(FileURI.path(of:))
        do {
            try store.apply(paths.map { .removeFile(path: $0) })
        } catch {
            failed(error.description)
        }
        do {
            _ = try index?.removeFiles(paths: paths)
        } catch {
            failed(error.description)
        }
        return removed
    }

    /// Thumbnails of files under `baseURIs` (all, if empty) that are gone or changed, removed;
    /// `since` (seconds since 1970, 0 for any) limits it to thumbnails written since then.
    @discardableResult
    package func cleanup(baseURIs: [String], since: UInt32) -> Int {
        cache.clean(under: baseURIs, writtenSince: Int64(since)).stale
    }
}
