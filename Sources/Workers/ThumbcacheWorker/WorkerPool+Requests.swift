import ThumbcacheImaging

/// What the pool decodes: each a request to a worker of the file's family (``run(_:format:maxPixelBytes:)``),
/// its reply checked against what was asked.
extension WorkerPool {
    package func thumbnail(ofFileAt path: String, options: ThumbnailOptions, format: ImageFormat?) throws -> (image: RGBAImage, info: ImageInfo) {
        let (image, info, _) = try thumbnail(path, options: options, format: format, wordsUpTo: nil)
        return (image, info)
    }

    /// One request for both: a text file's or a document's words cost no second trip to its worker.
    package func thumbnail(ofFileAt path: String, options: ThumbnailOptions, format: ImageFormat?, wordsUpTo limit: Int) throws
        -> (image: RGBAImage, info: ImageInfo, words: (format: ImageFormat, text: String)?)
    {
        try thumbnail(path, options: options, format: format, wordsUpTo: limit)
    }

    private func thumbnail(_ path: String, options: ThumbnailOptions, format: ImageFormat?, wordsUpTo limit: Int?) throws
        -> (image: RGBAImage, info: ImageInfo, words: (format: ImageFormat, text: String)?)
    {
        // `format` is not sent: the worker's decoders choose from the bytes themselves, never from
        // the parent's guess about a file it has not parsed; only a format bytes cannot name goes
        // along, for when nothing else claims them.
        var request = WorkerRequest(kind: .thumbnail, name: path, options: options)
        request.fallback = Self.fallback(format)
        request.textLimit = limit
        let answer = try run(request, format: format, maxPixelBytes: options.maxWidth * options.maxHeight * 4 + (limit ?? 0))
        guard let image = answer.reply.image, let info = answer.reply.info, image.width <= options.maxWidth, image.height <= options.maxHeight else {
            throw WorkerFailure(path: path, reason: .protocolViolation("a thumbnail larger than its box, or without its header"))
        }
        return (RGBAImage(width: image.width, height: image.height, pixels: answer.pixels, hasAlpha: image.hasAlpha), info, answer.text)
    }

    package func info(ofFileAt path: String, format: ImageFormat?) throws -> ImageInfo {
        var request = WorkerRequest(kind: .info, name: path)
        request.fallback = Self.fallback(format)
        guard let info = try run(request, format: format, maxPixelBytes: 0).reply.info else { throw WorkerFailure(path: path, reason: .protocolViolation("no header in an info reply")) }
        return info
    }

    package func text(ofFileAt path: String, format: ImageFormat?, limit: Int) throws -> (format: ImageFormat, text: String) {
        var request = WorkerRequest(kind: .text, name: path)
        request.fallback = Self.fallback(format)
        request.textLimit = limit
        guard let text = try run(request, format: format, maxPixelBytes: limit).text else {
            throw WorkerFailure(path: path, reason: .protocolViolation("no format in a text reply"))
        }
        return text
    }

    package func embeddedThumbnail(ofFileAt path: String) throws -> RGBAImage? {
        let answer = try run(WorkerRequest(kind: .embeddedThumbnail, name: path), format: .jpeg, maxPixelBytes: 1024 * 1024 * 4)
        return answer.reply.image.map { RGBAImage(width: $0.width, height: $0.height, pixels: answer.pixels, hasAlpha: $0.hasAlpha) }
    }
}
