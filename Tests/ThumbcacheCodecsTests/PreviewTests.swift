import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheDocumentCodecs
@testable import ThumbcacheStore

/// Previews through a generator with the real sandboxed workers: one file of each worker family,
/// a PDF's pages against poppler's `pdftoppm`, the cache and the command line.
struct PreviewTests {
    /// A preview request of `side` points for page `page` (from 0).
    static func request(_ path: String, side: Double = 1024, page: Int = 0) -> ThumbnailRequest {
        var request = ThumbnailRequest(fileAt: path, size: side, representationTypes: .preview)
        request.page = page
        return request
    }

    @Test func eachFamilysFileHasALargePreviewMadeOnceThenCached() async throws {
        let dir = TemporaryDirectory()
        let photo = testPhoto(width: 800, height: 600)
        let jpeg = try dir.write("photo.jpg", ImageEncoder.jpeg(photo, quality: 95))
        let heic = try FixtureTools.fixture(dir, "photo.heic", from: photo, "heif-enc") { ["-q", "95", "-o", $1, $0] }
        let movie = try MediaFormatTests.video(dir, "movie.mp4", from: photo, seconds: 1, ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "12"])
        let svg = try dir.write("drawing.svg", Array(TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "width=\"40\" height=\"20\"")
            .replacingOccurrences(of: "IMAGE", with: "").utf8))
        let pdf = try dir.write("report.pdf", MediaFormatTests.pdf(pages: 2))
        let text = try dir.write("notes.txt", Array(String(repeating: "A preview shows the first screen of a text.\n", count: 80).utf8))
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let generator = ThumbnailGenerator(store: store)
        // (file, the picture it shows or nil, the preview's expected size)
        let cases: [(String, RGBAImage?, (Int, Int))] = [
            (jpeg, photo, (600, 450)), (heic, photo, (600, 450)), (movie, photo, (600, 450)),
            (svg, nil, (600, 300)), (pdf, nil, (464, 600)), (text, nil, (0, 600)),
        ]
        for (path, picture, size) in cases {
            let made = try await generator.bestRepresentation(for: Self.request(path, side: 600))
            #expect(made.kind == .preview && !made.fromCache, "\(path)")
            #expect(made.pixelHeight == size.1 && (size.0 == 0 || made.pixelWidth == size.0), "\(path): \(made.pixelWidth)×\(made.pixelHeight)")
            #expect(made.encoding == (try made.image().hasAlpha ? .png : .jpeg), "\(path): JPEG when opaque")
            if let picture {
                let reference = Thumbnailer.resize(picture, options: ThumbnailOptions(maxWidth: 600, maxHeight: 600))
                let db = TestPictures.premultipliedPSNR(try made.image(), reference)
                // The video's 4:2:0 chroma costs it a little.
                #expect(db >= (path == movie ? 28 : 30), "\(path): PSNR \(db) dB against the picture")
            }
            // Far larger than the thumbnail of the same file, which is not made along with it.
            let thumbnail = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 256, representationTypes: .thumbnail))
            #expect(max(thumbnail.pixelWidth, thumbnail.pixelHeight) <= 256 && made.pixelHeight > 2 * thumbnail.pixelHeight, "\(path)")
            let again = try await generator.bestRepresentation(for: Self.request(path, side: 600))
            #expect(again.fromCache && again.data == made.data, "\(path): the second look is the cached preview")
        }
        #expect(generator.generationCount == 2 * cases.count, "one preview and one thumbnail rendered per file")
    }

    @Test func aPDFsPreviewOfPageNIsPopplersRenderOfThatPage() async throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("pages.pdf", MediaFormatTests.pdf(pageTexts: ["One", "Second page", "Third and last"]))
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let generator = ThumbnailGenerator(store: store)
        var pages: [[UInt8]] = []
        for page in 1...3 {
            let made = try await generator.bestRepresentation(for: Self.request(path, side: 600, page: page - 1))
            let image = try made.image()
            let reference = try MediaFormatTests.render("pdftoppm", dir, path, width: image.width, height: image.height, page: page)
            // A JPEG at the preview's quality: a little below the lossless thumbnail's 45 dB.
            let db = TestPictures.premultipliedPSNR(image, reference)
            #expect(db >= 38, "page \(page): PSNR \(db) dB against pdftoppm")
            pages.append(image.pixels)
        }
        #expect(Set(pages).count == 3, "three different pages")
        // Each page is its own record of the one content; page 2 again is a hit.
        let hash = try ContentHasher().hash(fileAt: path).0
        let content = try store.thumbnails(of: hash).map(\.key)
        #expect(content.filter { $0.variant.kind == .preview }.map(\.variant.page) == [0, 1, 2])
        #expect(try await generator.bestRepresentation(for: Self.request(path, side: 600, page: 1)).fromCache)
        // A page past the end is an error naming the pages, not the first page standing in.
        await #expect(throws: ImagingError(path: path, reason: .noSuchPage(page: 4, pages: 3))) {
            try await generator.bestRepresentation(for: Self.request(path, side: 600, page: 3))
        }
        let png = try dir.write("one.png", ImageEncoder.png(testPhoto(width: 40, height: 30)))
        await #expect(throws: ImagingError(path: png, reason: .noSuchPage(page: 2, pages: 1))) {
            try await generator.bestRepresentation(for: Self.request(png, page: 1))
        }
        // Nothing was recorded against the bytes: the first page of each still comes.
        #expect(try await generator.bestRepresentation(for: Self.request(png)).kind == .preview)
        #expect(try store.failure(content: hash, generatorVersion: thumbnailGeneratorVersion) == nil)
    }

    @Test func getWritesAPreviewOfAnyPageAsJPEGOrPNG() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("pages.pdf", MediaFormatTests.pdf(pageTexts: ["One", "Second page", "Third and last"]))
        let cache = dir.appending("cache")
        let jpeg = dir.appending("page-2.jpg")
        let made = try ChildProcess.run("thumbcache", ["get", "--cache", cache, path, "--kind", "preview", "--page", "2", "-s", "500", "-o", jpeg, "--json"])
        try #require(made.status == .exited(0), "\(made.stderr)")
        let json = made.stdout.joined(separator: "\n")
        #expect(json.contains("\"kind\" : \"preview\"") && json.contains("\"page\" : 2") && json.contains("\"height\" : 500"), "\(json)")
        let written = Array(try Data(contentsOf: URL(fileURLWithPath: jpeg)))
        #expect(written.starts(with: [0xFF, 0xD8, 0xFF]), "a .jpg output is the stored JPEG")
        let image = try ImageDecoder.jpeg(written)
        let reference = try MediaFormatTests.render("pdftoppm", dir, path, width: image.width, height: image.height, page: 2)
        #expect(TestPictures.premultipliedPSNR(image, reference) >= 38)
        // The same page as PNG comes from the cache.
        let png = dir.appending("page-2.png")
        let again = try ChildProcess.run("thumbcache", ["get", "--cache", cache, path, "--kind", "preview", "--page", "2", "-s", "500", "-o", png, "--json"])
        #expect(again.status == .exited(0) && again.stdout.joined().contains("\"fromCache\" : true"), "\(again.stderr)")
        #expect(try ImageDecoder.png(Array(Data(contentsOf: URL(fileURLWithPath: png)))).pixels == image.pixels)
        // A page past the end, and a page asked of a thumbnail, are errors that say so.
        let past = try ChildProcess.run("thumbcache", ["get", "--cache", cache, path, "--kind", "preview", "--page", "7", "-o", png])
        #expect(past.status == .exited(1) && past.stderr.contains("no page 7: the file has 3 pages"), "\(past.stderr)")
        let thumbnailPage = try ChildProcess.run("thumbcache", ["get", "--cache", cache, path, "--page", "2", "-o", png])
        #expect(thumbnailPage.status == .exited(64) && thumbnailPage.stderr.contains("--page is for --kind preview"), "\(thumbnailPage.stderr)")
    }
    /// A two-chapter EPUB, with a cover when `cover`, and a text file of its words wrapped as its
    /// pages are; the number of text pages they make.
    static func book(in dir: TemporaryDirectory, cover: Bool) throws -> (book: String, text: String, textPages: Int) {
        let sentence = "Call me Ishmael, for the sea was calling and the whale was somewhere beyond the grey horizon. "
        let chapter = { (n: Int) in
            DocumentFormatTests.xml("<html><body><h1>Chapter \(n)</h1>"
                + (1...14).map { "<p>\(String(repeating: sentence, count: ($0 + n) % 4 + 1))</p>" }.joined() + "</body></html>")
        }
        let coverItem = cover ? "<item id=\"c\" href=\"front.jpg\" media-type=\"image/jpeg\" properties=\"cover-image\"/>" : ""
        let book = try DocumentFormatTests.epub(dir, cover ? "book.epub" : "plain.epub", opf: """
            <package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>\(coverItem)\
            <item id="one" href="one.xhtml" media-type="application/xhtml+xml"/><item id="two" href="two.xhtml" media-type="application/xhtml+xml"/>\
            </manifest><spine><itemref idref="one"/><itemref idref="two"/></spine></package>
            """, files: (cover ? [DocumentFormatTests.Entry(name: "OEBPS/front.jpg", bytes: try DocumentFormatTests.jpeg)] : [])
                + [DocumentFormatTests.Entry(name: "OEBPS/one.xhtml", bytes: chapter(1)),
                   DocumentFormatTests.Entry(name: "OEBPS/two.xhtml", bytes: chapter(2))])
        let fd = open(book, O_RDONLY)
        defer { close(fd) }
        let words = try DocumentText.words(descriptor: fd, name: book, format: .epub, limit: 1 << 20)
        let lines = DocumentPages.wrapped(words, columns: TextSource.columns)
        #expect(lines.split(separator: "\n", omittingEmptySubsequences: false).allSatisfy { $0.unicodeScalars.count <= TextSource.columns })
        #expect(lines.replacingOccurrences(of: "\n", with: " ").split(separator: " ") == words.replacingOccurrences(of: "\n", with: " ").split(separator: " "),
                "wrapping keeps every word in order")
        let text = try dir.write(cover ? "book.txt" : "plain.txt", Array(lines.utf8))
        let textPages = (lines.split(separator: "\n", omittingEmptySubsequences: false).count + TextSource.linesPerPage - 1) / TextSource.linesPerPage
        try #require(textPages >= 3, "the book is long enough for a few pages: \(textPages)")
        return (book, text, textPages)
    }

    /// An e-book's page 1 is its cover; the pages after it are its words wrapped into lines and
    /// drawn as a text's pages are: page N+1 is, pixel for pixel, page N of a text file holding
    /// those lines. Past the end, the error counts the cover in.
    @Test func anEBooksPagesAfterItsCoverAreItsWords() async throws {
        let dir = TemporaryDirectory()
        let (book, text, textPages) = try Self.book(in: dir, cover: true)
        let generator = ThumbnailGenerator(store: try ThumbnailStore.open(directory: dir.appending("cache")))
        let cover = try await generator.bestRepresentation(for: Self.request(book, side: 600))
        #expect(TestPictures.premultipliedPSNR(try cover.image(), Thumbnailer.resize(DocumentFormatTests.picture,
                                                                                      options: ThumbnailOptions(maxWidth: 600, maxHeight: 600))) >= 30)
        for page in 1...2 {
            let ours = try await generator.bestRepresentation(for: Self.request(book, side: 600, page: page))
            let reference = try await generator.bestRepresentation(for: Self.request(text, side: 600, page: page - 1))
            #expect(try ours.image().pixels == reference.image().pixels, "page \(page + 1)")
        }
        let past = textPages + 1
        await #expect {
            _ = try await generator.bestRepresentation(for: Self.request(book, side: 600, page: past + 2))
        } throws: { error in
            "\(error)".contains("no page \(past + 3): the file has \(past) pages")
        }
    }

    /// An e-book without a cover starts with its words: its page N is page N of the text file,
    /// whichever page is asked first, and past the end the count has no cover in it. Its
    /// thumbnail is its first page of words, as the text file's is.
    @Test func anEBookWithoutACoverStartsWithItsWords() async throws {
        let dir = TemporaryDirectory()
        let (book, text, textPages) = try Self.book(in: dir, cover: false)
        let generator = ThumbnailGenerator(store: try ThumbnailStore.open(directory: dir.appending("cache")))
        for page in [1, 0, 2] {
            let ours = try await generator.bestRepresentation(for: Self.request(book, side: 600, page: page))
            let reference = try await generator.bestRepresentation(for: Self.request(text, side: 600, page: page))
            #expect(try ours.image().pixels == reference.image().pixels, "page \(page + 1)")
        }
        let thumbnail = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: book, size: 256))
        let textThumbnail = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: text, size: 256))
        let same = try thumbnail.image().pixels == textThumbnail.image().pixels
        #expect(thumbnail.kind == .thumbnail && same, "\(thumbnail.kind)")
        await #expect {
            _ = try await generator.bestRepresentation(for: Self.request(book, side: 600, page: textPages + 2))
        } throws: { error in
            "\(error)".contains("no page \(textPages + 3): the file has \(textPages) pages")
        }
    }

    /// A cover that cannot be decoded fails page 1 (and the thumbnail) only: the pages of words
    /// after it still show.
    @Test func aDamagedCoverFailsPageOneOnly() async throws {
        let dir = TemporaryDirectory()
        let book = try DocumentFormatTests.epub(dir, "damaged.epub", opf: """
            <package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>\
            <item id="c" href="front.jpg" media-type="image/jpeg" properties="cover-image"/>\
            <item id="one" href="one.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="one"/></spine></package>
            """, files: [DocumentFormatTests.Entry(name: "OEBPS/front.jpg", bytes: Array(try DocumentFormatTests.jpeg.prefix(40))),
                         DocumentFormatTests.Entry(name: "OEBPS/one.xhtml", bytes: DocumentFormatTests.xml("<html><body><p>Still readable.</p></body></html>"))])
        let generator = ThumbnailGenerator(store: try ThumbnailStore.open(directory: dir.appending("cache")))
        await #expect(throws: (any Error).self) { _ = try await generator.bestRepresentation(for: Self.request(book, side: 600)) }
        let second = try await generator.bestRepresentation(for: Self.request(book, side: 600, page: 1))
        #expect(second.kind == .preview && second.pixelHeight == 600)
    }
}
