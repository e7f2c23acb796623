#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheImaging

/// The worker's side: answers requests on its channel until the parent closes it.
///
/// It runs confined (the executable applies the sandbox before calling ``serve(decoders:hello:)``),
/// so it only reads the descriptors it is handed and writes to its channel.
package enum WorkerServer {
    /// Says hello (the protocol version and the confinement layers, or why confinement failed),
    /// then serves. Returns when the parent closes the channel.
    package static func serve(decoders: ImageDecoders, hello: WorkerReply.Hello) {
        let channel = WorkerChannel(descriptor: WorkerProtocol.channelDescriptor)
        guard (try? send(WorkerReply(hello: hello), on: channel)) != nil, hello.error == nil else { return }
        while true {
            let file: Int32
            let request: WorkerRequest
            do {
                var head = [UInt8](repeating: 0, count: 4)
                file = try head.withUnsafeMutableBytes { b throws(WorkerChannel.Failure) in try channel.receive(into: b, deadline: nil) }
                let length = WorkerChannel.readLE32(head, at: 0)
                guard length <= WorkerProtocol.maxDocumentBytes else { return }
                let document = try channel.receive(count: length, deadline: nil)
                guard let decoded = try? WorkerCoding.decodeRequest(document) else { return }
                request = decoded
            } catch {
                return  // the parent is gone
            }
            let (reply, pixels, words) = answer(request, file: file, decoders: decoders)
            if file >= 0 { close(file) }
            guard (try? send(reply, pixels: pixels, words: words, on: channel)) != nil else { return }
        }
    }

    /// The reply, its pixels (if an image) and its words (if text: a text request's, or those a
    /// thumbnail request wanted along), which follow the pixels.
    static func answer(_ request: WorkerRequest, file: Int32, decoders: ImageDecoders) -> (WorkerReply, [UInt8], [UInt8]) {
        guard file >= 0 else {
            return (WorkerReply(error: ImagingError(path: request.name, reason: .unreadable("no descriptor came with the request"))), [], [])
        }
        let fallback = request.fallback.map(ImageFormat.init(rawValue:))
        do throws(ImagingError) {
            switch request.kind {
            case .thumbnail:
                let options = request.options ?? ThumbnailOptions(maxWidth: 256, maxHeight: 256)
                let (image, info) = try Thumbnailer.thumbnail(ofDescriptor: file, name: request.name, options: options,
                                                              fallback: fallback, decoders: decoders)
                var reply = WorkerReply(image: .init(width: image.width, height: image.height, hasAlpha: image.hasAlpha), info: info)
                // The words along, for the index, sparing a second request; words that cannot be
                // read are simply not sent (the parent asks for them on their own).
                guard let limit = request.textLimit else { return (reply, image.pixels, []) }
                lseek(file, 0, SEEK_SET)
                guard let (format, text) = try? decoders.text(file, name: request.name, fallback: fallback, limit: limit) else {
                    return (reply, image.pixels, [])
                }
                reply.textFormat = format.rawValue
                return (reply, image.pixels, Array(text.utf8))
            case .info:
                return (WorkerReply(info: try Thumbnailer.info(ofDescriptor: file, name: request.name, fallback: fallback, decoders: decoders)), [], [])
            case .embeddedThumbnail:
                guard let image = try Thumbnailer.embeddedThumbnail(ofDescriptor: file, name: request.name) else { return (WorkerReply(), [], []) }
                return (WorkerReply(image: .init(width: image.width, height: image.height, hasAlpha: image.hasAlpha)), image.pixels, [])
            case .text:
                let (format, text) = try decoders.text(file, name: request.name, fallback: fallback, limit: request.textLimit ?? 0)
                return (WorkerReply(textFormat: format.rawValue), [], Array(text.utf8))
            }
        } catch {
            return (WorkerReply(error: error), [], [])
        }
    }

    static func send(_ reply: WorkerReply, pixels: [UInt8] = [], words: [UInt8] = [], on channel: WorkerChannel) throws {
        let document = WorkerCoding.encode(reply)
        try channel.send(WorkerChannel.le32(document.count) + WorkerChannel.le32(pixels.count + words.count) + document)
        if !pixels.isEmpty { try channel.send(pixels) }
        if !words.isEmpty { try channel.send(words) }
    }
}
