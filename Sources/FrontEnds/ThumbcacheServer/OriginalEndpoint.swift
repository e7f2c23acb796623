#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import Thumbcache
import ThumbcacheSync

/// `GET /files?path=…[&part=motion]`: a served file's own bytes (or a Motion Photo's movie), for
/// the viewer (a video plays from it and seeks by asking ranges). Confined to the served folders by the same check as every path, opened
/// once (`O_NOFOLLOW` on its real path, so a link swapped in meanwhile is not followed) and read
/// from that descriptor while the body streams. Sent as a sandboxed document: an HTML or SVG
/// file opened from here runs no script in the page's origin.
struct OriginalEndpoint: Sendable {
    let files: ServedFiles
    /// Bytes read from the file at a time while the body is sent.
    static let chunkBytes = 256 << 10

    func original(_ request: Request) async throws -> Response {
        let fields = try FormFields(request.uri.query?[...])
        let path = try files.roots.resolve(fields["path"] ?? "")
        let file = try OpenFile(path)
        // `part=motion`: a Motion Photo's movie, as a file of its own (found by the sandboxed
        // decoders, which read the photo's XMP).
        var (start, size, type) = (0, file.size, files.generator.factory.types.mimeType(of: files.generator.factory.types.type(ofFileAt: path)))
        if let part = fields["part"] {
            guard part == "motion" else { throw ServeError.badRequest("part must be motion") }
            let decoding = files.generator.decoding
            let info = try? await blocking { try decoding.info(ofFileAt: path, format: nil) }
            // At the file's end, or inside it before a Samsung trailer's directory.
            guard let movie = info?.media?.motionPhoto, movie.videoOffset > 0, movie.videoOffset + movie.videoLength <= file.size else {
                throw ServeError.notFound("no movie in \(path)")
            }
            (start, size, type) = (movie.videoOffset, movie.videoLength, "video/mp4")
        }
        let etag = "\"\(String(file.inode, radix: 16))-\(String(file.size, radix: 16))-\(String(file.modifiedNanoseconds, radix: 16))"
            + (start > 0 ? "-\(String(start, radix: 16))\"" : "\"")
        var headers: HTTPFields = [
            .contentType: type ?? "application/octet-stream",
            .acceptRanges: "bytes", .eTag: etag, .lastModified: HTTPDate.text(Int(file.modifiedNanoseconds / 1_000_000_000)),
            .cacheControl: "private, no-cache", .contentSecurityPolicy: "sandbox",
        ]
        // A range of a file that changed since the client's copy would mix two versions: If-Range.
        let current = request.headers[.ifRange].map { $0 == etag } ?? true
        let asked = current ? request.headers[.range] : nil
        switch ByteRange(asked, size: size) {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .whole:
            return Response(status: .ok, headers: headers, body: file.body(start..<(start + size)))
        case .part(let range):
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            return Response(status: .partialContent, headers: headers, body: file.body((start + range.lowerBound)..<(start + range.upperBound + 1)))
        }
    }
}

/// A regular file opened for reading, closed when the last response holding it is released
/// (a `HEAD` never reads it).
private final class OpenFile: Sendable {
    let descriptor: Int32
    let size: Int
    let inode: UInt64
    let modifiedNanoseconds: Int64

    init(_ path: String) throws(ServeError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            throw errno == EACCES ? ServeError(.forbidden, "permission denied: \(path)") : .notFound("cannot open \(path)")
        }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .notFound("not a file: \(path)")
        }
        descriptor = fd
        size = Int(st.st_size)
        inode = UInt64(st.st_ino)
        modifiedNanoseconds = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    }

    deinit { close(descriptor) }

    /// The bytes in `range`, read a chunk at a time off the server's threads.
    func body(_ range: Range<Int>) -> ResponseBody {
        ResponseBody(contentLength: range.count) { [self] writer in
            var offset = range.lowerBound
            while offset < range.upperBound {
                let (at, count) = (offset, min(OriginalEndpoint.chunkBytes, range.upperBound - offset))
                let chunk = try await blocking { () throws -> ByteBuffer in
                    var buffer = ByteBuffer()
                    let n = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { out in
                        switch retryingInterrupts({ pread(self.descriptor, out.baseAddress, count, off_t(at)) }) {
                        case .success(let n): return n
                        case .failure(let errno): throw ServeError(.internalServerError, "reading failed: \(errno)")
                        }
                    }
                    // Shorter than it was when the response began: it cannot be finished honestly.
                    guard n == count else { throw ServeError(.internalServerError, "the file changed while it was sent") }
                    return buffer
                }
                try await writer.write(chunk)
                offset += count
            }
            try await writer.finish(nil)
        }
    }
}
