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

    /// The built-ins declared at once (their magic sorted once) type every head as declaring them
    /// one by one did (sorted at each): the most specific magic first, and of two as specific,
    /// the one declared first; a later declaration of a type replaces its magic, as declared then.
    @Test func declaringAtOnceTypesAsDeclaringOneByOne() throws {
        var oneByOne = ContentTypeRegistry.catalogued
        var atOnce = ContentTypeRegistry.catalogued
        let a = ContentType("org.example.a"), b = ContentType("org.example.b"), c = ContentType("org.example.c")
        let list = [ContentTypeDeclaration(a, conformsTo: [.data], magic: [Magic("TCXA")]),
                    ContentTypeDeclaration(b, conformsTo: [.data], magic: [Magic("TCXB")]),
                    ContentTypeDeclaration(c, conformsTo: [.data], magic: [Magic("TCX")]),
                    ContentTypeDeclaration(a, conformsTo: [.data], magic: [Magic("TCXB")])]
        for d in list { oneByOne.declare(d) }
        atOnce.declare(contentsOf: list)
        var heads = ContentTypeRegistry.base.flatMap { $0.magic.map { m in
            let size = m.parts.map { $0.offset + $0.bytes.count }.max() ?? 0
            return m.parts.reduce(into: [UInt8](repeating: 0, count: size + 8)) { head, part in
                head.replaceSubrange(part.offset..<(part.offset + part.bytes.count), with: part.bytes)
            }
        } }
        heads += ["TCXA", "TCXB", "TCXC", "TCX"].map { Array($0.utf8) + [UInt8](repeating: 0, count: 8) }
        for head in heads { #expect(atOnce.type(of: head, name: "x") == oneByOne.type(of: head, name: "x"), "\(head.prefix(12))") }
        #expect(atOnce.type(of: Array("TCXB....".utf8), name: "x") == b, "b's magic, as specific as a's later one, was declared first")
        #expect(atOnce.type(of: Array("TCXA....".utf8), name: "x") == c, "a's first magic was replaced")
    }
}
