import Foundation
import Testing
@testable import ThumbcacheDocumentCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport

/// The words the document worker's extractors give the full-text index, read in-process from
/// files made here or by Debian's tools.
struct TextExtractionTests {
    static func words(_ path: String, limit: Int = 1 << 20, fallback: ImageFormat? = .text) throws -> (ImageFormat, String) {
        let file = try ImageFile(path: path)
        return try ImageDecoders.documents.text(file.descriptor, name: path, fallback: fallback, limit: limit)
    }

    @Test func textIsReadInItsOwnCharset() throws {
        let dir = TemporaryDirectory()
        let utf8 = try dir.write("utf8.txt", Array("naïve café — 東京\n".utf8))
        #expect(try Self.words(utf8) == (.text, "naïve café — 東京\n"))
        let utf16 = try dir.write("utf16.txt", [0xFF, 0xFE] + "Grüße".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(try Self.words(utf16).1 == "Grüße")
        let latin = try dir.write("latin.txt", Array("caf".utf8) + [0xE9, 0x20, 0x80])  // Windows-1252: é and €
        #expect(try Self.words(latin).1 == "café €")
        let binary = try dir.write("binary.txt", [0x41, 0x00, 0x42])
        #expect(throws: ImagingError.self) { try Self.words(binary) }
    }

    @Test func htmlGivesWhatAReaderSees() throws {
        let dir = TemporaryDirectory()
        let html = """
            <!DOCTYPE html><html><head><title>Q&amp;A</title><style>p { color: red }</style>
            <script>document.write("<p>not shown</p>")</script></head>
            <body><p class="x">Caf&eacute; &#8212; caf&#xE9; &unknown; 5 &lt; 6</p><!-- <p>no</p> --><div>two   spaced</div></body></html>
            """
        let path = try dir.write("page.html", Array(html.utf8))
        let (_, text) = try Self.words(path)
        #expect(text == "Q&A\n\nCafé — café &unknown; 5 < 6\n\ntwo spaced", "\(text)")
    }

    @Test func theLimitCutsAtACharacter() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("long.txt", Array(String(repeating: "é", count: 100).utf8))
        let (_, text) = try Self.words(path, limit: 51)
        #expect(text.utf8.count == 50 && text == String(repeating: "é", count: 25))
    }

    /// A PDF written by hand with two pages of text in a standard font: poppler's words, page by page.
    @Test func pdfPagesInReadingOrder() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("two.pdf", Self.pdf(pages: ["Hello invoice 42", "Second page words"]))
        let (format, text) = try Self.words(path, fallback: nil)
        #expect(format == .pdf)
        #expect(text.contains("Hello invoice 42") && text.contains("Second page words"), "\(text)")
        #expect(text.range(of: "Hello")!.lowerBound < text.range(of: "Second")!.lowerBound)
    }

    @Test func aPhotoHasNoWords() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("photo.png", try ImageEncoder.png(testPhoto(width: 8, height: 8)))
        let file = try ImageFile(path: path)
        #expect { try ImageDecoders.standard.text(file.descriptor, name: path, limit: 100) } throws: { error in
            "\(error)".contains("thumbcache extracts no text from png files")
        }
    }

    /// Subtitles say their cues' lines: no numbers, identifiers, timings, notes, styles or tags.
    @Test func subtitlesGiveWhatIsSaid() throws {
        let dir = TemporaryDirectory()
        let srt = try dir.write("film.srt", Array("1\r\n00:00:01,000 --> 00:00:02,500\r\n<i>Hello</i> there\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\nGeneral Kenobi\r\n".utf8))
        #expect(try Self.words(srt).1 == "Hello there\n\nGeneral Kenobi")
        let vtt = try dir.write("film.vtt", Array("""
            WEBVTT - a title

            NOTE not said
            at all

            STYLE
            ::cue { color: yellow }

            intro
            00:00.000 --> 00:01.000 align:start
            <c.yellow>Fish &amp; chips</c> <00:00.500>now

            00:01.000 --> 00:02.000
            Goodbye
            """.utf8))
        #expect(try Self.words(vtt).1 == "Fish & chips now\n\nGoodbye")
    }

    /// A message's subject and correspondents (encoded words decoded), its plain text part over
    /// its HTML alternative (quoted-printable undone), a base64 text attachment, no binary one.
    @Test func anEMailGivesItsHeadersAndText() throws {
        let dir = TemporaryDirectory()
        let eml = try dir.write("note.eml", Array("""
            From: =?UTF-8?Q?Ren=C3=A9e?= <renee@example.org>
            To: Bob <bob@example.org>
            Subject: =?ISO-8859-1?B?Q2Fm6SB0b25pZ2h0?=
            MIME-Version: 1.0
            Content-Type: multipart/mixed; boundary="outer"

            --outer
            Content-Type: multipart/alternative; boundary=inner

            --inner
            Content-Type: text/plain; charset=utf-8
            Content-Transfer-Encoding: quoted-printable

            See you at the caf=C3=A9 at eight, a long line that goes on and on and =
            on.
            --inner
            Content-Type: text/html; charset=utf-8

            <p>HTML copy, not read</p>
            --inner--
            --outer
            Content-Type: text/plain; name="list.txt"
            Content-Transfer-Encoding: base64

            bWlsaywgZWdncw==
            --outer
            Content-Type: image/png
            Content-Transfer-Encoding: base64

            iVBORw0KGgo=
            --outer--
            """.replacing("\n", with: "\r\n").utf8))
        let (_, text) = try Self.words(eml)
        #expect(text == "Café tonight\n\nRenée <renee@example.org>\n\nBob <bob@example.org>\n\n"
                + "See you at the café at eight, a long line that goes on and on and on.\n\nmilk, eggs", "\(text)")
    }

    /// The text readers on hostile input (seeded): markup cut anywhere, unclosed scripts and
    /// comments, entities out of range, encoded words and boundaries that lead nowhere. Each
    /// returns, and never more text than the input could make.
    @Test func theTextReadersTakeAnyInput() {
        var random = SeededRandom.forTest()
        let pieces = ["<", ">", "</", "<script>", "</script", "<!--", "-->", "&", "&#", "&#x110000;", "&#99999999999;", "&amp;", ";", "\"",
                      "'", "=?", "?=", "=?UTF-8?B?", "=?x?Q?=C3", "?=", "=", "=\r\n", "--b", "--b--", "boundary=b", "Content-Type: multipart/mixed;",
                      "\r\n", "\n", "\r", " ", "-->", "00:00:01,000 --> 00:00:02,000", "WEBVTT", "NOTE", "<w:t>", "</w:t>", "<w:p/>", "é", "東",
                      "\u{0}", "a", "word"]
        for _ in 0..<300 {
            let input = (0..<Int.random(in: 1...200, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let bound = input.utf8.count * 4 + 16
            #expect(HTMLText.words(input).utf8.count <= bound)
            #expect(XMLText.words(input, paragraphs: ["p"], only: ["t"]).utf8.count <= bound)
            #expect(SubtitleText.words(input).utf8.count <= bound)
            #expect(MailText.words(input).utf8.count <= bound * 2)  // base64 and header lines may add separators
        }
    }

    typealias Entry = DocumentFormatTests.Entry

    /// Office files and an e-book (ZIPs written by Python's zipfile, parts in each format's
    /// vocabulary): body text in order, with what is not body (field codes, deleted runs,
    /// markup) left out; a comic has pictures only.
    @Test func officeFilesAndEBooksGiveTheirBody() throws {
        let dir = TemporaryDirectory()
        let xml = DocumentFormatTests.xml
        let odt = try DocumentFormatTests.zip(dir, "memo.odt", [
            Entry(name: "mimetype", bytes: xml("application/vnd.oasis.opendocument.text"), stored: true),
            Entry(name: "content.xml", bytes: xml("""
                <?xml version="1.0"?><office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text>                <text:h>Quarterly memo</text:h><text:p>Sales rose<text:s/>by&#160;4 % &amp; costs fell.</text:p>                <text:p>Second<text:tab/>paragraph<text:line-break/>same one</text:p></office:text></office:body></office:document-content>
                """)),
        ])
        #expect(try Self.words(odt, fallback: nil).1 == "Quarterly memo\nSales rose by 4 % & costs fell.\nSecond paragraph\nsame one")
        let docx = try DocumentFormatTests.zip(dir, "letter.docx", [
            Entry(name: "word/document.xml", bytes: xml("""
                <w:document xmlns:w="w"><w:body><w:p><w:r><w:t>Dear </w:t></w:r><w:r><w:t xml:space="preserve">Ms Smith,</w:t></w:r></w:p>                <w:p><w:r><w:instrText>PAGE \\* MERGEFORMAT</w:instrText></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del>                <w:r><w:t>Thank you</w:t><w:tab/><w:t>kindly.</w:t></w:r></w:p></w:body></w:document>
                """)),
        ])
        #expect(try Self.words(docx, fallback: nil).1 == "Dear Ms Smith,\nThank you kindly.")
        let pptx = try DocumentFormatTests.zip(dir, "deck.pptx", [
            Entry(name: "ppt/slides/slide10.xml", bytes: xml("<p:sld><a:p><a:r><a:t>Last slide</a:t></a:r></a:p></p:sld>")),
            Entry(name: "ppt/slides/slide2.xml", bytes: xml("<p:sld><a:p><a:r><a:t>Second slide</a:t></a:r></a:p></p:sld>")),
        ])
        #expect(try Self.words(pptx, fallback: nil).1 == "Second slide\n\nLast slide")  // natural order: 2 before 10
        let book = try DocumentFormatTests.epub(dir, "novel.epub", opf: """
            <package xmlns="http://www.idpf.org/2007/opf"><manifest><item id="c2" href="two.xhtml" media-type="application/xhtml+xml"/>            <item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>
            """, files: [Entry(name: "OEBPS/text/one.xhtml", bytes: xml("<html><body><h1>Chapter One</h1><p>It was a dark night.</p></body></html>")),
                         Entry(name: "OEBPS/two.xhtml", bytes: xml("<html><body><p>The end.</p></body></html>"))])
        #expect(try Self.words(book, fallback: nil).1 == "Chapter One\n\nIt was a dark night.\n\nThe end.")
        let comic = try DocumentFormatTests.zip(dir, "issue.cbz", [Entry(name: "p1.png", bytes: try DocumentFormatTests.png)])
        #expect(throws: ImagingError.self) { try Self.words(comic, fallback: nil) }
    }

    /// `thumbcache text` through the sandboxed document worker: the words of a PDF and of an
    /// HTML page, and a clear error for a photo, which has none (the command goes on and exits 1).
    @Test func theTextCommandReadsThroughTheWorker() throws {
        let dir = TemporaryDirectory()
        let pdf = try dir.write("letter.pdf", Self.pdf(pages: ["Dear reader", "Yours sincerely"]))
        let html = try dir.write("page.htm", Array("<html><body><h1>Title</h1><script>x()</script><p>body text</p></body></html>".utf8))
        let photo = try dir.write("photo.png", try ImageEncoder.png(testPhoto(width: 8, height: 8)))
        let child = try ChildProcess(program: "thumbcache", arguments: ["text", "--json", pdf, photo, html])
        let (end, stderr) = child.wait()
        #expect(end == .exited(1))
        #expect(stderr.contains("\(photo): thumbcache extracts no text from png files"), "\(stderr)")
        let objects = try child.output.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == 2)
        let letter = try #require(objects.first ?? nil), page = try #require(objects.last ?? nil)
        #expect(letter["format"] as? String == "pdf" && letter["path"] as? String == pdf)
        #expect((letter["text"] as? String)?.contains("Dear reader") == true && (letter["text"] as? String)?.contains("Yours sincerely") == true)
        #expect(page["text"] as? String == "Title\n\nbody text", "\(page)")
    }

    /// A minimal PDF: one Helvetica text line per page, with a correct cross-reference table.
    static func pdf(pages: [String]) -> [UInt8] {
        var objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
        var kids: [String] = []
        for (i, line) in pages.enumerated() {
            let page = 3 + i * 2, content = page + 1
            kids.append("\(page) 0 R")
            let stream = "BT /F1 24 Tf 72 700 Td (\(line)) Tj ET"
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 \(3 + pages.count * 2) 0 R >> >> /Contents \(content) 0 R >>")
            objects.append("<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream")
        }
        objects[1] = "<< /Type /Pages /Kids [\(kids.joined(separator: " "))] /Count \(pages.count) >>"
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        var out = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (i, body) in objects.enumerated() {
            offsets.append(out.utf8.count)
            out += "\(i + 1) 0 obj\n\(body)\nendobj\n"
        }
        let xref = out.utf8.count
        out += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n" + offsets.map { String(format: "%010d 00000 n \n", $0) }.joined()
        out += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(out.utf8)
    }
}
