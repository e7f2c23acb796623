import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoders {
    /// The document family's decoders: PDF (poppler), text and fonts (FreeType), and documents
    /// that carry their own picture (libarchive). What `thumbcache-worker-documents` runs; poppler
    /// is GPL-licensed, so these link into worker executables only (Docs/LICENSES.md).
    public static let documents = ImageDecoders([.pdf, .text] + fonts + archives)

    /// One libarchive registration per archive-borne document format.
    static let archives = DocumentFormats.all.map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try ArchiveSource(descriptor: fd, name: name, format: signature.format) }
    }

    /// One FreeType registration per font format.
    static let fonts = MediaFormats.fonts.map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try FontSource(descriptor: fd, name: name) }
    }
}

extension ImageDecoderRegistration {
    /// PDF through poppler (Splash): the first page drawn at the output size.
    public static let pdf = ImageDecoderRegistration(.pdf) { (fd, name) throws(ImagingError) in
        try PDFSource(descriptor: fd, name: name)
    }

    /// Text of every kind through FreeType: the first lines on a page.
    public static let text = ImageDecoderRegistration(.plainText) { (fd, name) throws(ImagingError) in
        try TextSource(descriptor: fd, name: name)
    }
}
