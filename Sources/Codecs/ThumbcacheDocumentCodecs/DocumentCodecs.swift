import CThumbcacheArchive
import CThumbcacheText
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoders {
    /// The document family's decoders: PDF (poppler), text and fonts (FreeType), and documents
    /// that carry their own picture (libarchive). What `thumbcache-worker-documents` runs; poppler
    /// is GPL-licensed, so these link into worker executables only (Docs/LICENSES.md).
    package static let documents = {
        var decoders = ImageDecoders([.pdf, .text] + fonts + archives)
        // A PDF's thumbnail needs neither: read at a text page or a PDF's words, where Landlock allows.
        decoders.preload = preloadFonts
        return decoders
    }()

    /// One libarchive registration per archive-borne document format; the words of each but the
    /// comics, which have pictures only (their pages drawn with FreeType, loaded with libarchive).
    static let archives = FormatCatalogue.archiveDocuments.map { signature in
        let words = FormatCatalogue.withWords.contains(signature.format)
        return archive(signature).loadingLibrary {
            _ = carchive_load()
            if words { _ = ctext_load() }
        }
    }

    static func archive(_ signature: FormatDeclaration) -> ImageDecoderRegistration {
        let registration = ImageDecoderRegistration(signature) { (fd, name, settings) throws(ImagingError) in
            try ArchiveSource(descriptor: fd, name: name, format: signature.format, page: settings.page)
        }
        // A comic's pages are its pictures; another document carries one picture, its first
        // page, and its words laid out as text make the pages after it, or all of them when it
        // carries none (most Word files, e-books without a cover).
        guard !ArchiveSource.comics.contains(signature.format) else { return registration.drawingPages() }
        guard FormatCatalogue.withWords.contains(signature.format) else { return registration }
        return ImageDecoderRegistration(signature) { (fd, name, settings) throws(ImagingError) -> any RowSource in
            var carried: ArchiveSource?
            do throws(ImagingError) {
                carried = try ArchiveSource(descriptor: fd, name: name, format: signature.format)
            } catch {
                // A damaged picture fails page 1 only: the pages of words after it still show.
                guard settings.page > 0 else { throw error }
            }
            let hasPicture = carried.map { $0.header.width > 0 } ?? true
            if settings.page == 0, hasPicture, let carried { return carried }
            do throws(ImagingError) {
                return try DocumentPages.page(settings.page, descriptor: fd, name: name, format: signature.format, afterPicture: hasPicture,
                                              media: carried?.header.media)
            } catch {
                // Neither a picture nor words: the type's icon, as the carried source says.
                guard settings.page == 0, case .noSuchPage = error.reason, let carried else { throw error }
                return carried
            }
        }.drawingPages().extractingText { (fd, name, limit) throws(ImagingError) in
            try DocumentText.words(descriptor: fd, name: name, format: signature.format, limit: limit)
        }
    }

    /// One FreeType registration per font format.
    static let fonts = FormatCatalogue.fonts.map { signature in
        ImageDecoderRegistration(signature) { (fd, name) throws(ImagingError) in try FontSource(descriptor: fd, name: name) }
            .loadingLibrary { _ = ctext_load() }
    }
}
