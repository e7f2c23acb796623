import ThumbcacheImaging

extension ImageDecoders {
    /// The vector family's decoders: SVG through librsvg. What `thumbcache-worker-vector` runs;
    /// librsvg brings cairo, pango and GLib, the heaviest load of any image library, so only this
    /// worker loads them (Docs/SECURITY.md, "Worker families").
    package static let vector = ImageDecoders([.svg])
}
