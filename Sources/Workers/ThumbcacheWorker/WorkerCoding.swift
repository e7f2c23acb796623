#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import ThumbcacheImaging
import ThumbcacheSync

/// The documents of the worker protocol (version 2): the fields of every request and reply in
/// binary (``WireWriter``), and as JSON only what is rare or the same for every file (EXIF, a
/// recording's metadata, an error, the hello, the thumbnail options). JSON for every message was
/// a fifth of a warm of small files (Docs/PERFORMANCE.md, "Small files").
package enum WorkerCoding {
    package struct Malformed: Error, CustomStringConvertible {
        package var description: String { "a malformed worker message" }
    }

    // MARK: Requests

    package static func encode(_ request: WorkerRequest) throws -> [UInt8] {
        var w = WireWriter()
        w.uint8(request.kind.rawValue)
        w.string(request.name)
        try w.optional(request.options.map { try optionsBytes($0) }) { $0.run($1) }
        w.optional(request.fallback) { $0.string($1) }
        w.optional(request.textLimit) { $0.int($1) }
        return w.bytes
    }

    package static func decodeRequest(_ bytes: [UInt8]) throws(Malformed) -> WorkerRequest {
        var r = WireReader(bytes[...], longestRun: WorkerProtocol.maxDocumentBytes)
        guard let kind = r.uint8().flatMap(WorkerRequest.Kind.init(rawValue:)), let name = r.string(),
              let optionsRun = r.optional({ $0.run() }), let fallback = r.optional({ $0.string() }), let textLimit = r.optional({ $0.int() }),
              r.atEnd
        else { throw Malformed() }
        var request = WorkerRequest(kind: kind, name: name, options: try optionsRun.map { (run) throws(Malformed) in try options(from: Array(run)) })
        request.fallback = fallback
        request.textLimit = textLimit
        return request
    }

    /// A warm sends the same options with every file: they are encoded, and decoded, once.
    private static let lastOptions = Mutex<(options: ThumbnailOptions, bytes: [UInt8])?>(nil)

    private static func optionsBytes(_ options: ThumbnailOptions) throws -> [UInt8] {
        if let last = lastOptions.withLock({ $0 }), last.options == options { return last.bytes }
        let bytes = Array(try WorkerProtocol.encoder().encode(options))
        lastOptions.withLock { $0 = (options, bytes) }
        return bytes
    }

    private static func options(from bytes: [UInt8]) throws(Malformed) -> ThumbnailOptions {
        if let last = lastOptions.withLock({ $0 }), last.bytes == bytes { return last.options }
        guard let options = try? WorkerProtocol.decoder().decode(ThumbnailOptions.self, from: Data(bytes)) else { throw Malformed() }
        lastOptions.withLock { $0 = (options, bytes) }
        return options
    }

    // MARK: Replies

    package static func encode(_ reply: WorkerReply) throws -> [UInt8] {
        var w = WireWriter()
        try w.optional(reply.hello.map { try json($0) }) { $0.run($1) }
        w.optional(reply.image) { w, image in
            w.int(image.width)
            w.int(image.height)
            w.bool(image.hasAlpha)
        }
        try w.optional(reply.info.map { try infoBytes($0) }) { $0.run($1) }
        try w.optional(reply.error.map { try json($0) }) { $0.run($1) }
        w.optional(reply.textFormat) { $0.string($1) }
        return w.bytes
    }

    package static func decodeReply(_ bytes: [UInt8]) throws(Malformed) -> WorkerReply {
        var r = WireReader(bytes[...], longestRun: WorkerProtocol.maxDocumentBytes)
        guard let hello = r.optional({ $0.run() }),
              let image = r.optional({ r -> WorkerReply.Image? in
                  guard let width = r.int(), let height = r.int(), let hasAlpha = r.bool() else { return nil }
                  return WorkerReply.Image(width: width, height: height, hasAlpha: hasAlpha)
              }),
              let info = r.optional({ $0.run() }), let error = r.optional({ $0.run() }), let textFormat = r.optional({ $0.string() }), r.atEnd
        else { throw Malformed() }
        return WorkerReply(hello: try hello.map { (run) throws(Malformed) in try decodeJSON(WorkerReply.Hello.self, run) }, image: image,
                           info: try info.map { (run) throws(Malformed) in try decodeInfo(run) },
                           error: try error.map { (run) throws(Malformed) in try decodeJSON(ImagingError.self, run) }, textFormat: textFormat)
    }

    private static func infoBytes(_ info: ImageInfo) throws -> [UInt8] {
        var w = WireWriter()
        w.string(info.format.rawValue)
        w.int(info.pixelWidth)
        w.int(info.pixelHeight)
        w.int(info.orientation.rawValue)
        w.bool(info.hasAlpha)
        try w.optional(info.exif.map { try json($0) }) { $0.run($1) }
        w.optional(info.bitsPerSample) { $0.int($1) }
        w.optional(info.colorSpace) { $0.string($1) }
        w.optional(info.frameCount) { $0.int($1) }
        try w.optional(info.media.map { try json($0) }) { $0.run($1) }
        return w.bytes
    }

    private static func decodeInfo(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> ImageInfo {
        var r = WireReader(bytes, longestRun: WorkerProtocol.maxDocumentBytes)
        guard let format = r.string(), let width = r.int(), let height = r.int(), let orientation = r.int().flatMap(Orientation.init(rawValue:)),
              let hasAlpha = r.bool(), let exif = r.optional({ $0.run() }), let bits = r.optional({ $0.int() }),
              let colorSpace = r.optional({ $0.string() }), let frames = r.optional({ $0.int() }), let media = r.optional({ $0.run() }), r.atEnd
        else { throw Malformed() }
        var info = ImageInfo(format: ImageFormat(rawValue: format), pixelWidth: width, pixelHeight: height, orientation: orientation,
                             hasAlpha: hasAlpha, exif: try exif.map { (run) throws(Malformed) in try decodeJSON(EXIFData.self, run) }, bitsPerSample: bits,
                             colorSpace: colorSpace, frameCount: frames)
        info.media = try media.map { (run) throws(Malformed) in try decodeJSON(MediaMetadata.self, run) }
        return info
    }

    private static func json(_ value: some Encodable) throws -> [UInt8] { Array(try WorkerProtocol.encoder().encode(value)) }

    private static func decodeJSON<T: Decodable>(_ type: T.Type, _ bytes: ArraySlice<UInt8>) throws(Malformed) -> T {
        guard let value = try? WorkerProtocol.decoder().decode(type, from: Data(bytes)) else { throw Malformed() }
        return value
    }
}
