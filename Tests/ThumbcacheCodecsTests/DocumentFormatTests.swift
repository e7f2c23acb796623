import Foundation
import Testing
@testable import ThumbcacheDocumentCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// Documents and comics that are archives (OpenDocument, Office Open XML, EPUB, CBZ, CB7, CBT,
/// CBR), built here with Python (zipfile; RAR's blocks by hand) and libarchive's bsdtar around
/// pictures drawn here, through
/// the real sandboxed worker: the picture each carries, its title and authors, and what hostile
/// archives (a zip bomb, `../` names, truncation) do.
struct DocumentFormatTests {
    static var pool: WorkerPool { ImageFormatTests.pool }
    static let box = ImageFormatTests.box
    static let registry = ContentTypeRegistry()

    /// An entry: its bytes, or `zeros` bytes of zeros written in a stream (a bomb's payload).
    struct Entry {
        var name: String
        var bytes: [UInt8] = []
        var zeros = 0
        var stored = false
    }

    /// A ZIP of `entries`, in order, by Python's zipfile (deflated unless stored).
    static func zip(_ dir: TemporaryDirectory, _ name: String, _ entries: [Entry]) throws -> String {
        let out = dir.appending(name)
        var spec: [[String: Any]] = []
        for (i, e) in entries.enumerated() {
            let file = try dir.write("\(name).entry\(i)", e.bytes)
            spec.append(["name": e.name, "file": file, "zeros": e.zeros, "stored": e.stored])
        }
        let json = try dir.write("\(name).json", Array(JSONSerialization.data(withJSONObject: ["out": out, "entries": spec])))
        _ = try FixtureTools.run("/usr/bin/python3", ["-c", """
            import json, sys, zipfile
            spec = json.load(open(sys.argv[1]))
            with zipfile.ZipFile(spec["out"], "w") as z:
                for e in spec["entries"]:
                    info = zipfile.ZipInfo(e["name"])
                    info.compress_type = zipfile.ZIP_STORED if e["stored"] else zipfile.ZIP_DEFLATED
                    if not e["zeros"]:
                        z.writestr(info, open(e["file"], "rb").read())
                        continue
                    with z.open(info, "w", force_zip64=True) as f:
                        for _ in range(e["zeros"] // (1 << 20)):
                            f.write(bytes(1 << 20))
            """, json])
        return out
    }

    static func xml(_ s: String) -> [UInt8] { Array(s.utf8) }
    static let picture = TestPictures.source(width: 300, height: 400)
    static var png: [UInt8] { get throws { try ImageEncoder.png(picture) } }
    static var jpeg: [UInt8] { get throws { try ImageEncoder.jpeg(picture, quality: 95) } }

    static func openDocument(_ dir: TemporaryDirectory, _ name: String, thumbnail: [UInt8]?) throws -> String {
        var entries = [Entry(name: "mimetype", bytes: xml("application/vnd.oasis.opendocument.text"), stored: true),
                       Entry(name: "meta.xml", bytes: xml("""
                           <?xml version="1.0" encoding="UTF-8"?><office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" \
                           xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"><office:meta>\
                           <dc:title>Annual &amp; Quarterly Report</dc:title><meta:initial-creator>Ada Lovelace</meta:initial-creator>\
                           </office:meta></office:document-meta>
                           """))]
        if let thumbnail { entries.append(Entry(name: "Thumbnails/thumbnail.png", bytes: thumbnail)) }
        return try zip(dir, name, entries)
    }

    @Test func anOpenDocumentShowsItsStoredThumbnailAndIndexesItsAuthor() throws {
        let dir = TemporaryDirectory()
        let path = try Self.openDocument(dir, "report.odt", thumbnail: Self.png)
        let info = try ImageFormatTests.expectMatches(path, Self.picture, minimum: 40)
        #expect(info.media?.title == "Annual & Quarterly Report" && info.media?.authors == ["Ada Lovelace"])
        #expect(Self.registry.type(ofFileAt: path).identifier == "org.oasis-open.opendocument.text")
    }

    @Test func officeOpenXMLShowsItsThumbnailItsWordsOrItsIcon() throws {
        let dir = TemporaryDirectory()
        let core = Self.xml("""
            <cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" \
            xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Budget</dc:title><dc:creator>Grace Hopper</dc:creator></cp:coreProperties>
            """)
        let docx = try Self.zip(dir, "memo.docx", [Entry(name: "[Content_Types].xml", bytes: Self.xml("<Types/>")),
                                                   Entry(name: "docProps/core.xml", bytes: core),
                                                   Entry(name: "docProps/thumbnail.jpeg", bytes: Self.jpeg)])
        #expect(try ImageFormatTests.expectMatches(docx, Self.picture, minimum: 35).media?.authors == ["Grace Hopper"])
        // Bytes say ZIP, the name says a kind of ZIP: the name refines them.
        #expect(Self.registry.type(ofFileAt: docx).identifier == "org.openxmlformats.wordprocessingml.document")
        // No stored thumbnail (Office writes one only when asked): its first page of words, a white
        // page with dark lines on it, the title still indexed and no picture format.
        let letter = try Self.zip(dir, "letter.docx", [Entry(name: "docProps/core.xml", bytes: core), Entry(name: "word/document.xml", bytes: Self.xml("""
            <w:document xmlns:w="w"><w:body><w:p><w:r><w:t>Dear Ms Smith, thank you for the budget.</w:t></w:r></w:p></w:body></w:document>
            """))])
        let page = try Self.pool.thumbnail(ofFileAt: letter, options: Self.box, format: nil).image
        #expect(page.height == Self.box.maxHeight && page.width < page.height, "\(page.width)×\(page.height): a page's shape")
        let reds = stride(from: 0, to: page.pixels.count, by: 4).map { page.pixels[$0] }
        let (white, dark) = (reds.filter { $0 > 240 }.count, reds.filter { $0 < 200 }.count)
        #expect(white > reds.count / 2 && dark > 20, "\(white) white and \(dark) dark of \(reds.count) pixels")
        let letterInfo = try Self.pool.info(ofFileAt: letter, format: nil)
        #expect(letterInfo.media?.title == "Budget" && letterInfo.colorSpace == nil, "\(letterInfo)")
        // Neither a thumbnail nor words: the icon, the title still indexed.
        let xlsx = try Self.zip(dir, "budget.xlsx", [Entry(name: "[Content_Types].xml", bytes: Self.xml("<Types/>")),
                                                     Entry(name: "docProps/core.xml", bytes: core)])
        #expect {
            try Self.pool.thumbnail(ofFileAt: xlsx, options: Self.box, format: nil)
        } throws: { error in
            guard let failure = error as? ImagingError, case .noPicture = failure.reason else { return false }
            return failure.path == xlsx
        }
        #expect(try Self.pool.info(ofFileAt: xlsx, format: nil).media?.title == "Budget")
        // A ZIP by another name stays a ZIP.
        let plain = try Self.zip(dir, "stuff.zip", [Entry(name: "a.txt", bytes: Self.xml("hi"))])
        #expect(Self.registry.type(ofFileAt: plain) == .zip)
    }

    static func epub(_ dir: TemporaryDirectory, _ name: String, opf: String, opfPath: String = "OEBPS/content.opf",
                     files: [Entry]) throws -> String {
        try zip(dir, name, [Entry(name: "mimetype", bytes: xml("application/epub+zip"), stored: true),
                            Entry(name: "META-INF/container.xml", bytes: xml("""
                                <?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">\
                                <rootfiles><rootfile full-path="\(opfPath)" media-type="application/oebps-package+xml"/></rootfiles></container>
                                """)),
                            Entry(name: opfPath, bytes: xml(opf))] + files)
    }

    @Test func anEPUBShowsTheCoverItsPackageNames() throws {
        let dir = TemporaryDirectory()
        // EPUB 3: the manifest item with the cover-image property.
        let three = try Self.epub(dir, "three.epub", opf: """
            <package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">\
            <dc:title>Moby-Dick</dc:title><dc:creator>Herman Melville</dc:creator></metadata><manifest>\
            <item id="logo" href="images/logo.png" media-type="image/png"/>\
            <item id="c" href="images/front.jpg" media-type="image/jpeg" properties="cover-image"/></manifest></package>
            """, files: [Entry(name: "OEBPS/images/logo.png", bytes: try ImageEncoder.png(TestPictures.source(width: 20, height: 20))),
                         Entry(name: "OEBPS/images/front.jpg", bytes: Self.jpeg)])
        let info = try ImageFormatTests.expectMatches(three, Self.picture, minimum: 35)
        #expect(info.media?.title == "Moby-Dick" && info.media?.authors == ["Herman Melville"])
        #expect(Self.registry.type(ofFileAt: three).identifier == "org.idpf.epub-container")
        // EPUB 2: <meta name="cover">, an href relative to a package in a subfolder, percent-encoded.
        let two = try Self.epub(dir, "two.epub", opf: """
            <package version="2.0"><metadata><dc:title>Two</dc:title><dc:creator>A</dc:creator><dc:creator>B</dc:creator>\
            <meta name="cover" content="cov"/></metadata><manifest>\
            <item id="cov" href="../art/My%20Cover.png" media-type="image/png"/></manifest></package>
            """, opfPath: "book/text/content.opf", files: [Entry(name: "book/art/My Cover.png", bytes: Self.png)])
        #expect(try ImageFormatTests.expectMatches(two, Self.picture, minimum: 40).media?.authors == ["A", "B"])
    }

    /// A comic's page N is its Nth picture in natural order (a preview's page), and it says how
    /// many it has.
    @Test func aComicsPagesAreItsPicturesInNaturalOrder() throws {
        let dir = TemporaryDirectory()
        let pictures = [TestPictures.source(width: 200, height: 100), testPhoto(width: 120, height: 160), TestPictures.graphic(width: 90, height: 60, transparent: false)]
        let cbz = try Self.zip(dir, "issue.cbz", [Entry(name: "p10.png", bytes: ImageEncoder.png(pictures[2])), Entry(name: "p1.png", bytes: ImageEncoder.png(pictures[0])),
                                                  Entry(name: "p2.png", bytes: ImageEncoder.png(pictures[1]))])
        for (page, picture) in pictures.enumerated() {
            var options = ImageFormatTests.box
            options.page = page
            let made = try ImageFormatTests.pool.thumbnail(ofFileAt: cbz, options: options, format: nil)
            let reference = Thumbnailer.resize(picture, options: ImageFormatTests.box)
            #expect(made.info.media?.pageCount == 3)
            #expect((made.image.width, made.image.height) == (reference.width, reference.height) && TestPictures.premultipliedPSNR(made.image, reference) >= 40,
                    "page \(page + 1)")
        }
        var past = ImageFormatTests.box
        past.page = 3
        #expect(throws: ImagingError(path: cbz, reason: .noSuchPage(page: 4, pages: 3))) {
            try ImageFormatTests.pool.thumbnail(ofFileAt: cbz, options: past, format: nil)
        }
    }

    @Test func aComicShowsItsFirstPageInNaturalOrder() throws {
        let dir = TemporaryDirectory()
        let other = try ImageEncoder.png(TestPictures.source(width: 200, height: 100))
        let cbz = try Self.zip(dir, "issue.cbz", [Entry(name: "pages/page10.png", bytes: other), Entry(name: "pages/page2.png", bytes: other),
                                                  Entry(name: "__MACOSX/pages/._page0.png", bytes: other), Entry(name: "../page0.png", bytes: other),
                                                  Entry(name: "pages/.page0.png", bytes: other), Entry(name: "pages/page1.png", bytes: Self.png),
                                                  Entry(name: "ComicInfo.xml", bytes: Self.xml("<ComicInfo/>"))])
        try ImageFormatTests.expectMatches(cbz, Self.picture, minimum: 40)
        #expect(Self.registry.type(ofFileAt: cbz).identifier == "org.freedesktop.mime.application.vnd.comicbook+zip")
        #expect(ArchiveSource.naturalOrder("p9.png", "p10.png") && !ArchiveSource.naturalOrder("P10.png", "p9.png"))
        // 7-Zip and tar, by bsdtar (libarchive-tools): pages in a folder.
        try FileManager.default.createDirectory(atPath: dir.appending("pages"), withIntermediateDirectories: true)
        try dir.write("pages/01.png", Self.png)
        try dir.write("pages/02.png", other)
        for (name, format) in [("issue.cb7", "7zip"), ("issue.cbt", "ustar")] {
            _ = try FixtureTools.run("bsdtar", ["--format", format, "-cf", dir.appending(name), "-C", dir.appending("pages"), "."])
            try ImageFormatTests.expectMatches(dir.appending(name), Self.picture, minimum: 40)
        }
        // RAR, pages out of order: the first in natural order is the cover.
        let cbr = try Self.rar(dir, "issue.cbr", [Entry(name: "pages/page10.png", bytes: other), Entry(name: "pages/page1.png", bytes: Self.png),
                                                  Entry(name: "pages/page2.png", bytes: other)])
        try ImageFormatTests.expectMatches(cbr, Self.picture, minimum: 40)
        #expect(Self.registry.type(ofFileAt: cbr).identifier == "org.freedesktop.mime.application.vnd.comicbook-rar")
    }

    /// A RAR 4 archive of `entries`, stored (no RAR writer is free software, and libarchive reads
    /// RAR but does not write it): the block layout of RAR 2.9–4.x, each header's CRC the low
    /// half of its CRC-32, by Python's struct and zlib.
    static func rar(_ dir: TemporaryDirectory, _ name: String, _ entries: [Entry]) throws -> String {
        let out = dir.appending(name)
        var spec: [[String: Any]] = []
        for (i, e) in entries.enumerated() { spec.append(["name": e.name, "file": try dir.write("\(name).entry\(i)", e.bytes)]) }
        let json = try dir.write("\(name).json", Array(JSONSerialization.data(withJSONObject: ["out": out, "entries": spec])))
        _ = try FixtureTools.run("/usr/bin/python3", ["-c", """
            import json, struct, sys, zlib
            spec = json.load(open(sys.argv[1]))
            def block(kind, flags, body):
                head = struct.pack("<BHH", kind, flags, 7 + len(body)) + body
                return struct.pack("<H", zlib.crc32(head) & 0xFFFF) + head
            out = b"Rar!\\x1a\\x07\\x00" + block(0x73, 0, struct.pack("<HI", 0, 0))
            for e in spec["entries"]:
                data, name = open(e["file"], "rb").read(), e["name"].encode()
                # packed and unpacked size, Unix, CRC-32, DOS time, version 2.0, stored, name length, mode 0644
                body = struct.pack("<IIBIIBBHI", len(data), len(data), 3, zlib.crc32(data), 0x5A210000, 20, 0x30, len(name), 0o100644)
                out += block(0x74, 0x8000, body + name) + data
            open(spec["out"], "wb").write(out + block(0x7B, 0x4000, b""))
            """, json])
        return out
    }

    // MARK: Hostile archives

    @Test func aZipBombStopsAtTheCap() throws {
        let dir = TemporaryDirectory()
        // 96 MiB of zeros deflate to about 100 KB; the cap is 64 MiB.
        let path = try Self.zip(dir, "bomb.odt", [Entry(name: "mimetype", bytes: Self.xml("application/vnd.oasis.opendocument.text"), stored: true),
                                                  Entry(name: "Thumbnails/thumbnail.png", zeros: 96 << 20)])
        #expect {
            try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
        } throws: { error in
            guard let failure = error as? ImagingError, case .corrupt(let why) = failure.reason else { return false }
            return failure.path == path && why.contains("more than the 64 MiB")
        }
    }

    @Test func namesThatClimbOutAreNeverPages() throws {
        let dir = TemporaryDirectory()
        let outside = dir.appending("x")
        let path = try Self.zip(dir, "escape.cbz", [Entry(name: "../x", bytes: Self.png), Entry(name: "../../x.png", bytes: Self.png),
                                                    Entry(name: "/tmp/abs.png", bytes: Self.png)])
        #expect {
            try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
        } throws: { error in
            guard let failure = error as? ImagingError, case .noPicture = failure.reason else { return false }
            return failure.path == path
        }
        // Nothing is written anywhere: entries are read into memory only.
        #expect(!FileManager.default.fileExists(atPath: outside))
    }

    @Test func truncatedArchivesFailCleanly() throws {
        let dir = TemporaryDirectory()
        let inputs = [try Self.openDocument(dir, "whole.odt", thumbnail: Self.png),
                      try Self.epub(dir, "whole.epub", opf: "<package><manifest><item id=\"cover\" href=\"c.png\" media-type=\"image/png\"/></manifest></package>",
                                    files: [Entry(name: "OEBPS/c.png", bytes: Self.png)]),
                      try Self.zip(dir, "whole.cbz", [Entry(name: "1.png", bytes: Self.png), Entry(name: "2.png", bytes: Self.png)])]
        for input in inputs {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: input)))
            for fraction in [0.05, 0.3, 0.6, 0.9, 0.99] {
                let name = "\(Int(fraction * 100))-" + (input.split(separator: "/").last.map(String.init) ?? "")
                let path = try dir.write(name, Array(bytes.prefix(Int(Double(bytes.count) * fraction))))
                do {
                    _ = try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
                } catch let error as ImagingError {
                    #expect(error.path == path)
                } catch {
                    Issue.record("\(path): \(error)")
                }
            }
        }
    }
}
