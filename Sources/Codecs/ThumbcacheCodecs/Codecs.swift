import CThumbcacheDav1d
import CThumbcacheDe265
import CThumbcacheRaw
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoders {
    /// The image family's decoders: the standard PNG and JPEG ones and each bitmap format's
    /// library (Docs/IMAGING.md). What `thumbcache-worker` runs; linked into worker executables
    /// only, as every format library is (Docs/LICENSES.md). A HEIF or AVIF the direct path does not
    /// handle is handed on to the heavy family's libheif.
    package static let images = ImageDecoders(ImageDecoders.standard.registrations.reversed()
                                             + [.webP, .gif, .tiff, .heif, .avif, .bmp, .ico, .cur, .pnm, .tga, .qoi] + cameraRaw)

    /// One LibRaw registration per raw kind.
    static let cameraRaw = FormatCatalogue.cameraRaw.map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try RawSource(descriptor: fd, name: name, format: signature.format) }
            .loadingLibrary { _ = craw_load() }
    }
}

extension ImageDecoderRegistration {
    /// HEIF (HEVC): the primary image or a large enough embedded thumbnail, through libde265 a
    /// tile at a time when the picture is plain HEVC tiles; anything else is handed on to the
    /// heavy family's worker (libheif).
    package static let heif = directHEIF(.heif, fallback: handOnToLibheif)

    /// AVIF: through dav1d a tile at a time when the picture is plain AV1 tiles, else handed on
    /// as HEIF is.
    package static let avif = directHEIF(.avif, fallback: handOnToLibheif)

    /// HEIF or AVIF (`signature`) through the direct path, with `fallback` for what it does not handle.
    /// libde265 and dav1d, loaded at the first file that needs one, or both before the confinement
    /// where Landlock would not let them load later: the codec is known only inside the file.
    package static func directHEIF(_ signature: FormatDeclaration, fallback: @escaping HEIFFallback) -> ImageDecoderRegistration {
        ImageDecoderRegistration(signature) { (fd, name, settings) throws(ImagingError) in
            try DirectHEIFSource.open(descriptor: fd, name: name, threads: settings.threads, fallback: fallback)
        }
        // Both, where they cannot load later; with Landlock, HEVC may be libavcodec's.
        .loadingLibrary(whatTheFileNeeds: false) {
            _ = cde265_load()
            _ = cdav1d_load()
        }
    }

    /// The image worker does not load libheif: the pool sends the file to the worker that does.
    private static let handOnToLibheif: HEIFFallback = { (_, name) throws(ImagingError) in
        throw ImagingError(path: name, reason: .decodedElsewhere(by: libheifFamily))
    }

    /// The worker family that has libheif.
    package static let libheifFamily = WorkerFamily.heavy.rawValue
}
