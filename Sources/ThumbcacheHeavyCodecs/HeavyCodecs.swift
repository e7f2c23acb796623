import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoders {
    /// The heavy family's decoders: the image libraries that take longest to load, libheif (which
    /// links its encoders, x265 and libaom) and libjxl (with highway, which times its clock as it
    /// loads). What `thumbcache-worker-heavy` runs: the HEIF and AVIF files the image worker's
    /// direct path hands on (alpha, more than 8 bits, cropping, overlays), and JPEG XL.
    public static let heavy = ImageDecoders([.heifThroughLibheif, .avifThroughLibheif, .jpegXL])
}

extension ImageDecoderRegistration {
    /// HEIF through libheif, whatever its picture: the primary image or a large enough embedded
    /// thumbnail.
    public static let heifThroughLibheif = ImageDecoderRegistration(.heif) { (fd, name) throws(ImagingError) in
        try HEIFSource(file: MappedFile(descriptor: fd, name: name), name: name)
    }

    /// AVIF through libheif (and its dav1d), whatever its picture.
    public static let avifThroughLibheif = ImageDecoderRegistration(.avif) { (fd, name) throws(ImagingError) in
        try HEIFSource(file: MappedFile(descriptor: fd, name: name), name: name)
    }

    /// JPEG XL through libjxl: the first frame, upright.
    public static let jpegXL = ImageDecoderRegistration(.jpegXL) { (fd, name) throws(ImagingError) in
        try JXLSource(descriptor: fd, name: name)
    }

    /// What the direct HEIF path hands on, opened by libheif in the same process (a worker with
    /// both families' libraries, such as the tests').
    package static let libheif: @Sendable (MappedFile, String) throws(ImagingError) -> any RowSource = { (file, name) throws(ImagingError) in
        try HEIFSource(file: file, name: name)
    }
}
