import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache

/// A one-file call (`get`, the plug-in's through `thumbcache`) on a file whose first bytes name a
/// catalogued format types it with the built-in types alone (`ContentTypeRegistry.catalogued`):
/// reading shared-mime-info's database and the plug-ins came between the worker's start and its
/// request (Docs/PERFORMANCE.md). These show that the type is the same and that nothing is read.
struct OneFileTypesTests {
    /// Every file under /usr/share whose bytes name a catalogued format (icons, fonts, manuals,
    /// pictures), and pictures, PDFs and archives under names that say something else.
    @Test func theCataloguedTypesTypeAFileAsTheFullRegistryDoes() throws {
        let full = ContentTypeRegistry(), catalogued = ContentTypeRegistry.catalogued
        let dir = TemporaryDirectory()
        let contents: [[UInt8]] = [try ImageEncoder.png(TestPictures.source(width: 16, height: 12)),
                                   try ImageEncoder.jpeg(TestPictures.source(width: 16, height: 12)),
                                   PDFFixture.document(pages: 1, width: 200, height: 200, cropBox: nil, title: "T", author: "A", text: "x", pageTexts: nil),
                                   [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 60)]
        var files: [String] = []
        for (i, bytes) in contents.enumerated() {
            for name in ["notes.txt", "clip.ts", "data.xml", "image.svg", "Makefile", "main.c", "page.html", "book.epub", "comic.cbz", "x"] {
                files.append(try dir.write("\(i)-\(name)", bytes))
            }
        }
        for root in ["/usr/share/icons", "/usr/share/fonts", "/usr/share/doc", "/usr/share/pixmaps", "/usr/share/backgrounds", "/usr/share/sounds"] {
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            while let relative = walker.nextObject() as? String, files.count < 20_000 { files.append(root + "/" + relative) }
        }
        var compared = 0, formats = Set<String>()
        for path in files {
            guard let format = ImageDecoders.catalogue.format(ofFileAt: path) else { continue }
            formats.insert(format.rawValue)
            compared += 1
            let (expected, fast) = (full.type(ofFileAt: path), catalogued.type(ofFileAt: path))
            #expect(fast == expected, "\(path): \(fast) where the full registry says \(expected)")
        }
        #expect(compared >= 40 && formats.count >= 4, "\(compared) files, \(formats.sorted())")
        // What lets a format's type be told from a text type without the database.
        let formatTypes = Set(ContentTypeRegistry.base.map(\.type))
        #expect(TextTypes.identifiers.isDisjoint(with: formatTypes))
        #expect(formatTypes.allSatisfy { !TextTypes.isText($0) } && TextTypes.identifiers.allSatisfy(TextTypes.isText))
    }

    /// A cold `get` of a PNG opens neither shared-mime-info's database nor the plug-ins' folders
    /// (strace, on the real program); one of a text file, which only the types can name, opens both.
    @Test func aColdGetOfACataloguedFileReadsNoTypesDatabase() throws {
        let dir = TemporaryDirectory()
        let picture = try dir.write("photo.png", ImageEncoder.png(TestPictures.source(width: 64, height: 48)))
        let text = try dir.write("notes.txt", Array("Words only the content types can name.\n".utf8))
        for (file, reads) in [(picture, false), (text, true)] {
            let log = dir.appending("strace-\(reads).log")
            _ = try FixtureTools.run("strace", ["-f", "-qq", "-e", "trace=open,openat,openat2", "-o", log, ChildProcess.productsDirectory + "/thumbcache",
                                                "get", file, "-o", dir.appending("out-\(reads).png"), "--no-daemon", "--cache", dir.appending("cache")])
            _ = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: dir.appending("out-\(reads).png")))), name: file)
            let opened = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            let database = opened.contains { $0.contains("/mime/") }, plugIns = opened.contains { $0.contains("/thumbnailers") }
            #expect(database == reads && plugIns == reads, "\(file): shared-mime-info read \(database), plug-ins read \(plugIns)")
        }
    }
}
