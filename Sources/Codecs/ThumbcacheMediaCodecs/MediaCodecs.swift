import ThumbcacheImaging

extension ImageDecoders {
    /// The media family's decoders: one FFmpeg registration per video and audio container. What
    /// `thumbcache-worker-media` runs; FFmpeg as Debian builds it is GPL-licensed, and its
    /// libraries are most of a worker's start (Docs/PERFORMANCE.md), so only this worker loads them.
    package static let media = ImageDecoders((FormatCatalogue.movies + FormatCatalogue.audio).map { signature in
        ImageDecoderRegistration(signature) { (fd, name, settings) throws(ImagingError) in
            try MediaSource(descriptor: fd, name: name, page: settings.page)
        }.drawingPages()
    })
}
