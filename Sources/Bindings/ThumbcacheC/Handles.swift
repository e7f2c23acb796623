import CThumbcacheAPI
import Glibc
import Synchronization
import Thumbcache

/// An open cache as C holds it (`thumbcache *`): the store, a generator over it, and the index
/// beside it, opened at the first search or warm.
final class CacheHandle: Sendable {
    let store: ThumbnailStore
    let generator: ThumbnailGenerator
    private let openedIndex = Mutex<MetadataIndex?>(nil)

    init(directory: String) throws {
        store = try ThumbnailStore.open(directory: directory)
        // What `thumbcache get` does, so that an app and the command answer alike.
        generator = ThumbnailGenerator(store: store, standardThumbnails: FreedesktopThumbnailCache())
    }

    /// The metadata index at `<cache>/index`, created if needed.
    func index() throws -> MetadataIndex {
        try openedIndex.withLock { index in
            if let index { return index }
            let opened = try MetadataIndex.open(directory: store.directory + "/index")
            index = opened
            return opened
        }
    }
}

/// A representation as C holds it (`thumbcache_image *`). Its PNG bytes and strings are copied
/// into memory this object owns, so that the pointers C is given stay valid until it is freed.
final class ImageHandle {
    let width: UInt32
    let height: UInt32
    let kind: UInt32
    let fromCache: Bool
    let png: CBytes
    let standsInBecause: CString?
    /// Decoded from ``png`` on first asking, once; C may ask from several threads.
    private let rgba = Mutex<CBytes?>(nil)

    init(_ representation: ThumbnailRepresentation) throws {
        width = UInt32(representation.pixelWidth)
        height = UInt32(representation.pixelHeight)
        kind = switch representation.kind {
        case .icon: THUMBCACHE_KIND_ICON.rawValue
        case .lowQuality: THUMBCACHE_KIND_LOW_QUALITY.rawValue
        case .thumbnail: THUMBCACHE_KIND_THUMBNAIL.rawValue
        case .preview: THUMBCACHE_KIND_PREVIEW.rawValue
        }
        fromCache = representation.fromCache
        png = CBytes(try representation.pngData())
        standsInBecause = representation.standsInBecause.map(CString.init)
    }

    /// The pixels, or nil (with the thread's message set) if they do not decode.
    func pixels() -> UnsafePointer<UInt8>? {
        rgba.withLock { rgba -> UnsafePointer<UInt8>? in
            if rgba == nil {
                do { rgba = CBytes(try ImageDecoder.png(Array(UnsafeBufferPointer(start: png.pointer, count: png.count)), name: "(thumbnail)").pixels) } catch {
                    _ = Status.fail(error)
                    return nil
                }
            }
            return rgba.map { UnsafePointer($0.pointer) }
        }
    }
}

/// Search results as C holds them (`thumbcache_results *`).
final class ResultsHandle {
    struct Row {
        var path: CString?
        var score: Double
        var snippet: CString?
    }

    let total: Int
    let rows: [Row]

    init(_ results: SearchResults) {
        total = results.count
        rows = results.results.map { Row(path: $0.path.map(CString.init), score: $0.score ?? 0, snippet: $0.snippet.map { CString($0.text) }) }
    }
}

/// Bytes in memory of their own, freed with the object that holds them. Written once in `init`
/// and only read after, so any thread may read them: what makes the pointer safe to share.
final class CBytes: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<UInt8>
    let count: Int

    init(_ bytes: [UInt8]) {
        count = bytes.count
        pointer = .allocate(capacity: max(1, bytes.count))
        pointer.initialize(from: bytes, count: bytes.count)
    }

    deinit { pointer.deallocate() }
}

/// A NUL-terminated copy of a string, freed with the object that holds it; like ``CBytes``,
/// never written after `init`.
final class CString: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CChar>

    init(_ string: String) {
        pointer = strdup(string)
    }

    deinit { free(pointer) }
}
