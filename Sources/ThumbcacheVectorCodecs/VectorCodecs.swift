import ThumbcacheImaging

extension ImageDecoders {
    /// The vector family's decoders: SVG through librsvg. What `thumbcache-worker-vector` runs;
    /// librsvg brings cairo, pango and GLib, the heaviest load of any image library, so only this
    /// worker loads them (Docs/SECURITY.md, "Worker families").
    public static let vector = ImageDecoders([.svg])
}

extension ImageDecoderRegistration {
    /// SVG through librsvg and cairo: drawn at the output size.
    public static let svg = ImageDecoderRegistration(.svg) { (fd, name) throws(ImagingError) in
        try SVGSource(descriptor: fd, name: name)
    }
}
