import ThumbcacheImaging
import ThumbcacheSync

/// The documents of the worker protocol (version 4): every request and reply in binary
/// (``WireWriter``; the options, EXIF, metadata and errors as ThumbcacheImaging's WireCoding writes
/// them). JSON for every message was a fifth of a warm of small files, and the hello's, the
/// options' and the metadata's about a millisecond of a one-file miss; an error's, the first use
/// of both JSON coders in a one-file call on a broken file (Docs/PERFORMANCE.md).
package enum WorkerCoding {
    package struct Malformed: Error, CustomStringConvertible {
        package var description: String { "a malformed worker message" }
    }

    // MARK: Requests

    package static func encode(_ request: WorkerRequest) -> [UInt8] {
        var w = WireWriter()
        w.uint8(request.kind.rawValue)
        w.string(request.name)
        w.optional(request.options.map { optionsBytes($0) }) { $0.run($1) }
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

    private static func optionsBytes(_ options: ThumbnailOptions) -> [UInt8] {
        var w = WireWriter()
        options.write(to: &w)
        return w.bytes
    }

    private static func options(from bytes: [UInt8]) throws(Malformed) -> ThumbnailOptions {
        var r = WireReader(bytes[...], longestRun: WorkerProtocol.maxDocumentBytes)
        guard let options = ThumbnailOptions(reading: &r), r.atEnd else { throw Malformed() }
        return options
    }

    // MARK: Replies

    package static func encode(_ reply: WorkerReply) -> [UInt8] {
        var w = WireWriter()
        w.optional(reply.hello.map { helloBytes($0) }) { $0.run($1) }
        w.optional(reply.image) { w, image in
            w.int(image.width)
            w.int(image.height)
            w.bool(image.hasAlpha)
        }
        w.optional(reply.info.map { infoBytes($0) }) { $0.run($1) }
        w.optional(reply.error.map { errorBytes($0) }) { $0.run($1) }
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
        return WorkerReply(hello: try hello.map { (run) throws(Malformed) in try decodeHello(run) }, image: image,
                           info: try info.map { (run) throws(Malformed) in try decodeInfo(run) },
                           error: try error.map { (run) throws(Malformed) in try decodeError(run) }, textFormat: textFormat)
    }

    /// The version first, in every version of the protocol: a worker of another build is told
    /// apart from a broken one by it.
    private static func helloBytes(_ hello: WorkerReply.Hello) -> [UInt8] {
        var w = WireWriter()
        w.int(hello.version)
        w.strings(hello.layers)
        w.optionalString(hello.error)
        return w.bytes
    }

    private static func decodeHello(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> WorkerReply.Hello {
        var r = WireReader(bytes, longestRun: WorkerProtocol.maxDocumentBytes)
        guard let version = r.int() else { throw Malformed() }
        // Another version's hello may go on differently: its version is all that is read of it.
        guard version == WorkerProtocol.version else { return WorkerReply.Hello(version: version, layers: [], error: nil) }
        guard let layers = r.strings(), let error = r.optionalString(), r.atEnd else { throw Malformed() }
        return WorkerReply.Hello(version: version, layers: layers, error: error)
    }

    private static func infoBytes(_ info: ImageInfo) -> [UInt8] {
        var w = WireWriter()
        w.string(info.format.rawValue)
        w.int(info.pixelWidth)
        w.int(info.pixelHeight)
        w.int(info.orientation.rawValue)
        w.bool(info.hasAlpha)
        w.optional(info.exif) { $1.write(to: &$0) }
        w.optional(info.bitsPerSample) { $0.int($1) }
        w.optional(info.colorSpace) { $0.string($1) }
        w.optional(info.frameCount) { $0.int($1) }
        w.optional(info.media) { $1.write(to: &$0) }
        return w.bytes
    }

    private static func decodeInfo(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> ImageInfo {
        var r = WireReader(bytes, longestRun: WorkerProtocol.maxDocumentBytes)
        guard let format = r.string(), let width = r.int(), let height = r.int(), let orientation = r.int().flatMap(Orientation.init(rawValue:)),
              let hasAlpha = r.bool(), let exif = r.optional({ EXIFData(reading: &$0) }), let bits = r.optional({ $0.int() }),
              let colorSpace = r.optional({ $0.string() }), let frames = r.optional({ $0.int() }),
              let media = r.optional({ MediaMetadata(reading: &$0) }), r.atEnd
        else { throw Malformed() }
        var info = ImageInfo(format: ImageFormat(rawValue: format), pixelWidth: width, pixelHeight: height, orientation: orientation,
                             hasAlpha: hasAlpha, exif: exif, bitsPerSample: bits, colorSpace: colorSpace, frameCount: frames)
        info.media = media
        return info
    }

    private static func errorBytes(_ error: ImagingError) -> [UInt8] {
        var w = WireWriter()
        error.write(to: &w)
        return w.bytes
    }

    private static func decodeError(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> ImagingError {
        var r = WireReader(bytes, longestRun: WorkerProtocol.maxDocumentBytes)
        guard let error = ImagingError(reading: &r), r.atEnd else { throw Malformed() }
        return error
    }
}
