import CThumbcacheAPI
import FoundationEssentials
import Glibc
import Thumbcache
import ThumbcacheSync

// The functions thumbcache.h declares, in its order; @_cdecl exports each under its C name
// (public, or an optimized build drops them as unused). Each checks its arguments, turns the
// library's errors into a status and a message, and never lets a Swift error or trap reach C.

@_cdecl("thumbcache_version")
public func thumbcacheVersionC() -> UnsafePointer<CChar> {
    UnsafeRawPointer(thumbcacheVersionText.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("thumbcache_open")
public func thumbcacheOpen(_ directory: UnsafePointer<CChar>?, _ cache: UnsafeMutablePointer<OpaquePointer?>?) -> thumbcache_status {
    guard let cache else { return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "thumbcache_open: cache is NULL") }
    cache.pointee = nil
    let path = directory.map { String(cString: $0) } ?? ThumbnailStore.defaultDirectory
    guard !path.isEmpty else { return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "thumbcache_open: the directory is empty (NULL opens the default cache)") }
    do {
        cache.pointee = OpaquePointer(Unmanaged.passRetained(try CacheHandle(directory: path)).toOpaque())
        return THUMBCACHE_OK
    } catch {
        return Status.fail(error)
    }
}

@_cdecl("thumbcache_close")
public func thumbcacheClose(_ cache: OpaquePointer?) {
    guard let cache else { return }
    Unmanaged<CacheHandle>.fromOpaque(UnsafeRawPointer(cache)).release()
}

@_cdecl("thumbcache_get")
public func thumbcacheGet(_ cache: OpaquePointer?, path: UnsafePointer<CChar>?, size: UInt32, scale: Double, kinds: UInt32,
                          image: UnsafeMutablePointer<OpaquePointer?>?) -> thumbcache_status {
    answer("thumbcache_get", cache, path, size: size, scale: scale, into: image) { file throws(ArgumentRefusal) in
        let types = ThumbnailRequest.RepresentationTypes(rawValue: Int(kinds)).intersection(.all)
        guard !types.isEmpty else { throw ArgumentRefusal(message: "\(file): kinds \(kinds) asks for no representation") }
        return ThumbnailRequest(fileAt: FilePaths.resolved(file), size: Double(size), scale: scale, representationTypes: types)
    }
}

@_cdecl("thumbcache_get_preview")
public func thumbcacheGetPreview(_ cache: OpaquePointer?, path: UnsafePointer<CChar>?, page: UInt32, size: UInt32, scale: Double,
                                 image: UnsafeMutablePointer<OpaquePointer?>?) -> thumbcache_status {
    answer("thumbcache_get_preview", cache, path, size: size, scale: scale, into: image) { file throws(ArgumentRefusal) in
        var request = ThumbnailRequest(fileAt: FilePaths.resolved(file), size: Double(size), scale: scale, representationTypes: .preview)
        request.page = Int(page)
        return request
    }
}

/// An argument C passed that a request cannot be made of.
private struct ArgumentRefusal: Error {
    let message: String
}

/// What both get functions check first (the image pointer, the cache, the path, the size and the
/// scale), then the request `make` builds for the file, answered into `image`.
private func answer(_ function: String, _ cache: OpaquePointer?, _ path: UnsafePointer<CChar>?, size: UInt32, scale: Double,
                    into image: UnsafeMutablePointer<OpaquePointer?>?,
                    _ make: (String) throws(ArgumentRefusal) -> ThumbnailRequest) -> thumbcache_status {
    guard let image else { return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "\(function): image is NULL") }
    image.pointee = nil
    guard let handle = handle(cache), let path, path.pointee != 0 else {
        return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "\(function): the cache or the path is NULL or empty")
    }
    let file = String(cString: path)
    guard (1...4096).contains(size) else { return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "\(file): size \(size) is not between 1 and 4096") }
    guard scale > 0 && scale <= 8 else { return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "\(file): scale \(scale) is not above 0 and at most 8") }
    do {
        return represent(try make(file), of: file, by: handle, into: image)
    } catch {
        return Status.fail(THUMBCACHE_ERROR_ARGUMENT, error.message)
    }
}

/// Answers `request` for the file C named `file` into `image`: a missing file is reported, not
/// given its type's icon (as `thumbcache get` says too).
private func represent(_ request: ThumbnailRequest, of file: String, by handle: CacheHandle,
                       into image: UnsafeMutablePointer<OpaquePointer?>) -> thumbcache_status {
    var status = stat()
    guard stat(file, &status) == 0 else { return Status.fail(THUMBCACHE_ERROR_UNREADABLE, "\(file): \(String(cString: strerror(errno)))") }
    let generator = handle.generator
    do {
        let representation = try waitFor { try await generator.bestRepresentation(for: request) }
        image.pointee = OpaquePointer(Unmanaged.passRetained(try ImageHandle(representation)).toOpaque())
        return THUMBCACHE_OK
    } catch {
        return Status.fail(error)
    }
}

@_cdecl("thumbcache_image_width")
public func thumbcacheImageWidth(_ image: OpaquePointer?) -> UInt32 { imageHandle(image)?.width ?? 0 }

@_cdecl("thumbcache_image_height")
public func thumbcacheImageHeight(_ image: OpaquePointer?) -> UInt32 { imageHandle(image)?.height ?? 0 }

@_cdecl("thumbcache_image_kind")
public func thumbcacheImageKind(_ image: OpaquePointer?) -> UInt32 { imageHandle(image)?.kind ?? 0 }

@_cdecl("thumbcache_image_from_cache")
public func thumbcacheImageFromCache(_ image: OpaquePointer?) -> Int32 { imageHandle(image)?.fromCache == true ? 1 : 0 }

@_cdecl("thumbcache_image_stands_in_because")
public func thumbcacheImageStandsInBecause(_ image: OpaquePointer?) -> UnsafePointer<CChar>? {
    imageHandle(image)?.standsInBecause.map { UnsafePointer($0.pointer) }
}

@_cdecl("thumbcache_image_png")
public func thumbcacheImagePNG(_ image: OpaquePointer?, _ size: UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>? {
    guard let handle = imageHandle(image) else {
        size?.pointee = 0
        return nil
    }
    size?.pointee = handle.png.count
    return UnsafePointer(handle.png.pointer)
}

@_cdecl("thumbcache_image_rgba")
public func thumbcacheImageRGBA(_ image: OpaquePointer?) -> UnsafePointer<UInt8>? { imageHandle(image)?.pixels() }

@_cdecl("thumbcache_image_free")
public func thumbcacheImageFree(_ image: OpaquePointer?) {
    guard let image else { return }
    Unmanaged<ImageHandle>.fromOpaque(UnsafeRawPointer(image)).release()
}

@_cdecl("thumbcache_warm")
public func thumbcacheWarm(_ cache: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                           _ summary: UnsafeMutablePointer<thumbcache_warm_summary>?) -> thumbcache_status {
    guard let handle = handle(cache), let path, path.pointee != 0 else {
        return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "thumbcache_warm: the cache or the path is NULL or empty")
    }
    let root = FilePaths.resolved(String(cString: path))
    guard FileManager.default.fileExists(atPath: root) else { return Status.fail(THUMBCACHE_ERROR_UNREADABLE, "\(root): no such file or directory") }
    do {
        let index = try handle.index()
        let warmer = Warmer(store: handle.store)
        let done = try waitFor { await warmer.warm([root], options: Warmer.Options(index: index)) }
        try index.sync()
        summary?.pointee = thumbcache_warm_summary(
            seen: UInt64(done.seen), generated: UInt64(done.generated), already_cached: UInt64(done.alreadyCached),
            not_supported: UInt64(done.notSupported), failed: UInt64(done.failed),
            indexed: UInt64((done.index?.added ?? 0) + (done.index?.updated ?? 0)))
        return THUMBCACHE_OK
    } catch {
        return Status.fail(error)
    }
}

@_cdecl("thumbcache_search")
public func thumbcacheSearch(_ cache: OpaquePointer?, _ query: UnsafePointer<CChar>?, _ limit: Int, _ flags: UInt32,
                             _ results: UnsafeMutablePointer<OpaquePointer?>?) -> thumbcache_status {
    guard let results else { return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "thumbcache_search: results is NULL") }
    results.pointee = nil
    guard let handle = handle(cache), let query else { return Status.fail(THUMBCACHE_ERROR_ARGUMENT, "thumbcache_search: the cache or the query is NULL") }
    do {
        let options = SearchOptions(limit: limit > 0 ? limit : nil, snippets: flags & THUMBCACHE_SEARCH_SNIPPETS != 0)
        let found = try handle.index().search(String(cString: query), options: options)
        results.pointee = OpaquePointer(Unmanaged.passRetained(ResultsHandle(found)).toOpaque())
        return THUMBCACHE_OK
    } catch {
        return Status.fail(error)
    }
}

@_cdecl("thumbcache_results_count")
public func thumbcacheResultsCount(_ results: OpaquePointer?) -> Int { resultsHandle(results)?.rows.count ?? 0 }

@_cdecl("thumbcache_results_total")
public func thumbcacheResultsTotal(_ results: OpaquePointer?) -> Int { resultsHandle(results)?.total ?? 0 }

@_cdecl("thumbcache_results_path")
public func thumbcacheResultsPath(_ results: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    row(results, index)?.path.map { UnsafePointer($0.pointer) }
}

@_cdecl("thumbcache_results_score")
public func thumbcacheResultsScore(_ results: OpaquePointer?, _ index: Int) -> Double { row(results, index)?.score ?? 0 }

@_cdecl("thumbcache_results_snippet")
public func thumbcacheResultsSnippet(_ results: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    row(results, index)?.snippet.map { UnsafePointer($0.pointer) }
}

@_cdecl("thumbcache_results_free")
public func thumbcacheResultsFree(_ results: OpaquePointer?) {
    guard let results else { return }
    Unmanaged<ResultsHandle>.fromOpaque(UnsafeRawPointer(results)).release()
}

// The objects behind C's pointers, borrowed for one call.

private func handle(_ cache: OpaquePointer?) -> CacheHandle? {
    cache.map { Unmanaged<CacheHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

private func imageHandle(_ image: OpaquePointer?) -> ImageHandle? {
    image.map { Unmanaged<ImageHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

private func resultsHandle(_ results: OpaquePointer?) -> ResultsHandle? {
    results.map { Unmanaged<ResultsHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

private func row(_ results: OpaquePointer?, _ index: Int) -> ResultsHandle.Row? {
    guard let rows = resultsHandle(results)?.rows, rows.indices.contains(index) else { return nil }
    return rows[index]
}
