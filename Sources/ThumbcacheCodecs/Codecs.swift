import ThumbcacheImaging

extension ImageDecoders {
    /// Every decoder thumbcache has: the standard PNG and JPEG ones and each format's library
    /// (Docs/IMAGING.md). What the sandboxed worker runs; linked into worker executables only,
    /// because some of these libraries (libheif through x265) are GPL-licensed.
    public static let all = ImageDecoders(ImageDecoders.standard.registrations.reversed() + [.webP, .gif, .tiff, .heif, .avif, .jpegXL, .svg, .bmp, .ico, .cur, .pnm, .tga] + cameraRaw
                                          + media + [.pdf, .text] + fonts + documents)

    /// One FFmpeg registration per video and audio container.
    static let media = (MediaFormats.movies + MediaFormats.audio).map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try MediaSource(descriptor: fd, name: name) }
    }

    /// One libarchive registration per archive-borne document format.
    static let documents = DocumentFormats.all.map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try ArchiveSource(descriptor: fd, name: name, format: signature.format) }
    }

    /// One FreeType registration per font format.
    static let fonts = MediaFormats.fonts.map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try FontSource(descriptor: fd, name: name) }
    }

    /// One LibRaw registration per raw kind.
    static let cameraRaw = CameraRaw.signatures.map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try RawSource(descriptor: fd, name: name, format: signature.format) }
    }
}

extension ImageDecoderRegistration {
    /// WebP through libwebp: the first frame, scaled on load.
    public static let webP = ImageDecoderRegistration(.webP) { (fd, name) throws(ImagingError) in
        try WebPSource(descriptor: fd, name: name)
    }

    /// GIF through giflib: the first frame, composed on its canvas.
    public static let gif = ImageDecoderRegistration(.gif) { (fd, name) throws(ImagingError) in
        try GIFSource(descriptor: fd, name: name)
    }

    /// TIFF through libtiff: the first page or a reduced-resolution copy, in bands.
    public static let tiff = ImageDecoderRegistration(.tiff) { (fd, name) throws(ImagingError) in
        try TIFFSource(descriptor: fd, name: name)
    }

    /// HEIF (HEVC) through libheif: the primary image or a large enough embedded thumbnail.
    public static let heif = ImageDecoderRegistration(.heif) { (fd, name) throws(ImagingError) in
        try HEIFSource(descriptor: fd, name: name)
    }

    /// AVIF through libheif (dav1d or libaom underneath).
    public static let avif = ImageDecoderRegistration(.avif) { (fd, name) throws(ImagingError) in
        try HEIFSource(descriptor: fd, name: name)
    }

    /// JPEG XL through libjxl: the first frame, upright.
    public static let jpegXL = ImageDecoderRegistration(.jpegXL) { (fd, name) throws(ImagingError) in
        try JXLSource(descriptor: fd, name: name)
    }

    /// PDF through poppler (Splash): the first page drawn at the output size.
    public static let pdf = ImageDecoderRegistration(.pdf) { (fd, name) throws(ImagingError) in
        try PDFSource(descriptor: fd, name: name)
    }

    /// Text of every kind through FreeType: the first lines on a page.
    public static let text = ImageDecoderRegistration(.plainText) { (fd, name) throws(ImagingError) in
        try TextSource(descriptor: fd, name: name)
    }

    /// SVG through librsvg and cairo: drawn at the output size.
    public static let svg = ImageDecoderRegistration(.svg) { (fd, name) throws(ImagingError) in
        try SVGSource(descriptor: fd, name: name)
    }
}
