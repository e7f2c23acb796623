import ThumbcacheImaging

/// Where the built-in image decoders run: in this process, or in sandboxed worker processes
/// (``WorkerPool``). Both give the same pixels and metadata for the same file.
package protocol ImageDecoding: Sendable {
    /// The thumbnail of the image at `path` within `options`' box, and what its header said.
    func thumbnail(ofFileAt path: String, options: ThumbnailOptions, format: ImageFormat?) throws -> (image: RGBAImage, info: ImageInfo)
    /// Size, orientation and EXIF of the image at `path`, from its header.
    func info(ofFileAt path: String, format: ImageFormat?) throws -> ImageInfo
    /// The JPEG's embedded EXIF thumbnail, upright, or nil.
    func embeddedThumbnail(ofFileAt path: String) throws -> RGBAImage?
    /// The words of the file at `path` as plain text, at most `limit` bytes of UTF-8, and the
    /// format whose extractor read them.
    func text(ofFileAt path: String, format: ImageFormat?, limit: Int) throws -> (format: ImageFormat, text: String)
    /// Gets ready to decode the file at `path`, whose first bytes name `format`, while the caller
    /// does other work (a worker process started for its family); nothing where there is nothing
    /// to start.
    func prepare(forFileAt path: String, format: ImageFormat)
    /// Lets go of idle workers without waiting for their exit, for a process that ends next;
    /// nothing where there are none.
    func hangUpIdleWorkers()
    /// The thumbnail as above, and the file's words (as ``text(ofFileAt:format:limit:)``) if they
    /// could be read along with it: nil words when not (ask for them on their own then).
    func thumbnail(ofFileAt path: String, options: ThumbnailOptions, format: ImageFormat?, wordsUpTo limit: Int) throws
        -> (image: RGBAImage, info: ImageInfo, words: (format: ImageFormat, text: String)?)
}

extension ImageDecoding {
    package func prepare(forFileAt path: String, format: ImageFormat) {}
    package func hangUpIdleWorkers() {}
    package func thumbnail(ofFileAt path: String, options: ThumbnailOptions, format: ImageFormat?, wordsUpTo limit: Int) throws
        -> (image: RGBAImage, info: ImageInfo, words: (format: ImageFormat, text: String)?)
    {
        let (image, info) = try thumbnail(ofFileAt: path, options: options, format: format)
        return (image, info, nil)
    }
}

/// Decoding in this process: for trusted input and the lowest latency.
package struct InProcessDecoding: ImageDecoding {
    package let decoders: ImageDecoders

    package init(decoders: ImageDecoders = .standard) {
        self.decoders = decoders
    }

    package func thumbnail(ofFileAt path: String, options: ThumbnailOptions, format: ImageFormat?) throws -> (image: RGBAImage, info: ImageInfo) {
        try Thumbnailer.thumbnail(ofFileAt: path, options: options, format: format, decoders: decoders)
    }

    package func info(ofFileAt path: String, format: ImageFormat?) throws -> ImageInfo {
        try Thumbnailer.info(ofFileAt: path, format: format, decoders: decoders)
    }

    package func embeddedThumbnail(ofFileAt path: String) throws -> RGBAImage? {
        try Thumbnailer.embeddedThumbnail(ofFileAt: path)
    }

    package func text(ofFileAt path: String, format: ImageFormat?, limit: Int) throws -> (format: ImageFormat, text: String) {
        let file = try ImageFile(path: path)
        return try decoders.text(file.descriptor, name: path, fallback: FormatCatalogue.unnamedByBytes(format), limit: limit)
    }
}
