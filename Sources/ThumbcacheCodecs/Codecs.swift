import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoders {
    /// The image family's decoders: the standard PNG and JPEG ones and each image format's library
    /// (Docs/IMAGING.md). What `thumbcache-worker` runs; linked into worker executables only,
    /// because some of these libraries (libheif through x265) are GPL-licensed.
    public static let images = ImageDecoders(ImageDecoders.standard.registrations.reversed() + [.webP, .gif, .tiff, .heif, .avif, .jpegXL, .bmp, .ico, .cur, .pnm, .tga]
                                             + cameraRaw)

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

    /// HEIF (HEVC): the primary image or a large enough embedded thumbnail, through libde265 a
    /// tile at a time when the picture is plain HEVC tiles, else through libheif.
    public static let heif = ImageDecoderRegistration(.heif, open: DirectHEIFSource.open)

    /// AVIF: through dav1d a tile at a time when the picture is plain AV1 tiles, else through libheif.
    public static let avif = ImageDecoderRegistration(.avif, open: DirectHEIFSource.open)

    /// JPEG XL through libjxl: the first frame, upright.
    public static let jpegXL = ImageDecoderRegistration(.jpegXL) { (fd, name) throws(ImagingError) in
        try JXLSource(descriptor: fd, name: name)
    }
}
