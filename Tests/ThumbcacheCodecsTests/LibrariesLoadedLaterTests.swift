import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import ThumbcacheWorker

/// A worker starts without the libraries only some of its formats need (a PDF never needs
/// libarchive, a text file never poppler, a comic never FreeType, a JPEG never libtiff, LibRaw, libavcodec, libde265 or dav1d) and loads one, already
/// confined, at the first file that needs it: Landlock lets it read the system's libraries (SECURITY.md). Without Landlock, where
/// every open is refused once confined, it loads them before, and the files decode the same.
struct LibrariesLoadedLaterTests {
    enum Case: String, CaseIterable {
        case archiveInTheDocumentsWorker, popplerInTheDocumentsWorker, freetypeInTheDocumentsWorker, tiffInTheImageWorker, rawInTheImageWorker, heicInTheImageWorker, avifInTheImageWorker
    }

    @Test(arguments: Case.allCases, [true, false])
    func aWorkerLoadsALibraryConfinedAtItsFirstFileThatNeedsIt(_ which: Case, landlock: Bool) throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(width: 120, height: 90)
        let first, second: String
        let library: String, format: ImageFormat
        switch which {
        case .archiveInTheDocumentsWorker:
            first = try dir.write("notes.txt", Array("Words before any archive.\n".utf8))
            second = try DocumentFormatTests.openDocument(dir, "report.odt", thumbnail: ImageEncoder.png(photo))
            (library, format) = ("libarchive", .openDocumentText)
        case .popplerInTheDocumentsWorker:
            first = try dir.write("notes.txt", Array("Words before any PDF.\n".utf8))
            second = try dir.write("report.pdf", MediaFormatTests.pdf())
            (library, format) = ("libpoppler-cpp", .pdf)
        case .freetypeInTheDocumentsWorker:
            first = try DocumentFormatTests.zip(dir, "issue.cbz", [.init(name: "p1.png", bytes: ImageEncoder.png(photo))])
            second = try dir.write("notes.txt", Array("Words after a comic's pictures.\n".utf8))
            (library, format) = ("libfreetype", .text)
        case .tiffInTheImageWorker:
            first = try dir.write("photo.png", ImageEncoder.png(photo))
            second = try FixtureTools.fixture(dir, "photo.tif", from: photo, "convert") { [$0, "-compress", "lzw", $1] }
            (library, format) = ("libtiff", .tiff)
        case .rawInTheImageWorker:
            first = try dir.write("photo.png", ImageEncoder.png(photo))
            second = try dir.write("linear.dng", DNGFixture(raw: photo, preview: nil, orientation: 1).build())
            (library, format) = ("libraw_r", .dng)
        case .heicInTheImageWorker:
            first = try dir.write("photo.png", ImageEncoder.png(photo))
            second = try FixtureTools.fixture(dir, "photo.heic", from: photo, "heif-enc") { ["-q", "90", "-o", $1, $0] }
            // libavcodec's HEVC decoder where it can load at the first HEIC; without Landlock, libde265
            // (loaded before the confinement; libavcodec's 96 libraries are not, at every start).
            (library, format) = (landlock ? "libavcodec" : "libde265", .heif)
        case .avifInTheImageWorker:
            first = try dir.write("photo.png", ImageEncoder.png(photo))
            second = try FixtureTools.fixture(dir, "photo.avif", from: photo, "convert") { [$0, "-alpha", "off", "-quality", "90", $1] }
            (library, format) = ("libdav1d", .avif)
        }
        var configuration = WorkerPool.Configuration(workers: 1)
        configuration.withoutLandlock = !landlock
        let pool = WorkerPool(configuration)
        let box = ThumbnailOptions(maxWidth: 64, maxHeight: 64)
        _ = try pool.thumbnail(ofFileAt: first, options: box, format: [.archiveInTheDocumentsWorker, .popplerInTheDocumentsWorker].contains(which) ? .text : nil)
        let workers = pool.idleWorkerIdentifiers
        try #require(workers.count == 1, "\(workers)")
        func maps() -> String { Self.maps(of: workers[0]) }
        let status = try String(contentsOfFile: "/proc/\(workers[0])/status", encoding: .utf8)
        #expect(status.contains("Seccomp:\t2"), "\(status)")
        #expect(maps().contains("libpng16") && maps().contains(library) == !landlock)
        let thumbnail = try pool.thumbnail(ofFileAt: second, options: box, format: which == .freetypeInTheDocumentsWorker ? .text : nil)
        #expect(thumbnail.info.format == format && max(thumbnail.image.width, thumbnail.image.height) == 64)
        #expect(maps().contains(library))
        #expect(pool.workersStarted == 1)
    }

    /// A worker started for a file (a one-file call's, whose worker starts before it asks) loads
    /// that file's library before it confines itself, as if linked: the file comes next, and
    /// waiting for it to load would be on the call's time. Started for another file, it does not;
    /// nor for a HEIC, whose codec (libavcodec's or libde265's HEVC) is known only inside it.
    enum StartedFor: String, CaseIterable { case pdf, text, heic }

    @Test(arguments: StartedFor.allCases)
    func aWorkerStartedForAFileLoadsItsLibraryFirst(_ which: StartedFor) throws {
        let dir = TemporaryDirectory()
        let (file, family, library): (String, WorkerFamily, String) = switch which {
        case .pdf: (try dir.write("report.pdf", MediaFormatTests.pdf()), .documents, "libpoppler-cpp")
        case .text: (try dir.write("notes.txt", Array("Only words here.\n".utf8)), .documents, "libpoppler-cpp")
        case .heic: (try FixtureTools.fixture(dir, "photo.heic", from: TestPictures.source(width: 64, height: 48), "heif-enc") { ["-q", "90", "-o", $1, $0] },
                     .images, "libde265")
        }
        let pool = WorkerPool(WorkerPool.Configuration(workers: 1))
        // A text file's bytes name no format: nothing is started ahead for it (as a one-file call does).
        if let format = ImageDecoders.catalogue.format(ofFileAt: file) { pool.prepare(forFileAt: file, format: format) }
        // Its hello: the worker has confined itself, and nothing has been asked of it yet.
        let layers = try pool.confinement(of: family).layers
        #expect(layers.contains("seccomp"))
        // Without Landlock every worker loads its libraries before its confinement.
        let landlocked = layers.contains { $0.hasPrefix("landlock") }
        let workers = pool.idleWorkerIdentifiers
        try #require(workers.count == 1, "\(workers)")
        #expect(Self.maps(of: workers[0]).contains(library) == (which == .pdf || !landlocked))
        #expect(pool.workersStarted == 1)
    }

    /// The image worker's program is also the plug-in's, which forks documents workers: it links
    /// their decoders, and loads none of their libraries unless it becomes one.
    @Test func theImageWorkerStartsWithoutTheDocumentsLibraries() throws {
        let pool = WorkerPool(WorkerPool.Configuration(workers: 1))
        defer { pool.close() }
        #expect(try pool.confinement(of: .images).layers.contains("seccomp"))
        let workers = pool.idleWorkerIdentifiers
        try #require(workers.count == 1, "\(workers)")
        let maps = Self.maps(of: workers[0])
        #expect(maps.contains("libpng16"))
        for library in ["libfreetype", "libpoppler", "libarchive"] { #expect(!maps.contains(library), "\(library)") }
    }

    /// The process's mappings, read to the end: a /proc file's size says 0, and one read of it gives one page.
    static func maps(of pid: pid_t) -> String {
        let data = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps")).readToEnd()) ?? nil
        return String(decoding: data ?? Data(), as: UTF8.self)
    }
}
