import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoders {
    /// The heavy family's decoders: the image libraries that take longest to load, libheif (which
    /// links its encoders, x265 and libaom) and libjxl (with highway, which times its clock as it
    /// loads). What `thumbcache-worker-heavy` runs: the HEIF and AVIF files the image worker's
    /// direct path hands on (alpha, more than 12 bits, cropping, overlays), and JPEG XL.
    package static let heavy = ImageDecoders([.throughLibheif(.heif), .throughLibheif(.avif), .jpegXL])
}

extension ImageDecoderRegistration {
    /// HEIF or AVIF (`signature`) through libheif, whatever its picture: the primary image or a
    /// large enough embedded thumbnail.
    package static func throughLibheif(_ signature: FormatDeclaration) -> ImageDecoderRegistration {
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try libheif(MappedFile(descriptor: fd, name: name), name) }
    }

    /// What the direct HEIF path hands on, opened by libheif in the same process (a worker with
    /// both families' libraries, such as the tests').
    package static let libheif: @Sendable (MappedFile, String) throws(ImagingError) -> any RowSource = { (file, name) throws(ImagingError) in
        try HEIFSource(file: file, name: name)
    }
}
