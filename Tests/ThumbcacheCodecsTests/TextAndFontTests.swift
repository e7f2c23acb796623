import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// Text and font files: their content types (names, bytes and shared-mime-info together), the
/// page of text and the font sample the real sandboxed worker draws with FreeType, and what a
/// hostile file of either kind does (an error naming it, or a thumbnail).
struct TextAndFontTests {
    static var pool: WorkerPool { ImageFormatTests.pool }
    static let box = ThumbnailOptions(maxWidth: 320, maxHeight: 320)
    static let registry = ContentTypeRegistry()

    // MARK: Content types

    @Test(arguments: [
        ("main.c", "int main(void) { return 0; }\n", "public.c-source"),
        ("tool.py", "print('hi')\n", "public.python-script"),
        ("build.sh", "#!/bin/sh\necho hi\n", "public.shell-script"),
        ("README.md", "# Title\n", "net.daringfireball.markdown"),
        ("notes.txt", "hello\n", "public.plain-text"),
        ("data.json", "{\"a\": 1}\n", "public.json"),
        ("readme", "plain words\n", "public.plain-text"),
    ])
    func textTypesComeFromNameAndBytes(name: String, text: String, expected: String) {
        #expect(Self.registry.type(of: Array(text.utf8), name: name).identifier == expected)
    }

    /// A text's page N (a preview's) is the page its lines from 40 × N on make: the same pixels as
    /// the first page of a text that starts there; past its last line, an error counting its pages.
    @Test func aTextsLaterPagesAreItsLaterLines() throws {
        let dir = TemporaryDirectory()
        let lines = (1...100).map { "line \($0): " + String(repeating: "abc ", count: $0 % 12) }
        let whole = try dir.write("long.txt", Array((lines.joined(separator: "\n") + "\n").utf8))
        func page(_ path: String, _ n: Int) throws -> RGBAImage {
            var options = Self.box
            options.page = n
            return try Self.pool.thumbnail(ofFileAt: path, options: options, format: .text).image
        }
        let first = try page(whole, 0)
        for n in 1...2 {
            let rest = try dir.write("from-\(n).txt", Array((lines[(40 * n)...].joined(separator: "\n") + "\n").utf8))
            let later = try page(whole, n)
            #expect(later.pixels == (try page(rest, 0)).pixels, "page \(n + 1) shows the lines from \(40 * n + 1) on")
            #expect(later.pixels != first.pixels)
        }
        #expect(throws: ImagingError(path: whole, reason: .noSuchPage(page: 4, pages: 3))) { try page(whole, 3) }
    }

    @Test func sourceCodeConformsToPlainTextAndText() {
        let tree = Self.registry.tree(of: "public.python-script").map(\.identifier)
        #expect(tree.starts(with: ["public.python-script", "public.script", "public.source-code", "public.plain-text", "public.text"]))
    }

    /// Types without an Apple identifier come from shared-mime-info's tree: every `text/*` type,
    /// and every subclass of `text/plain` (Debian's shared-mime-info; Tools/setup installs it).
    @Test func sharedMIMEInfosTextTypesCount() {
        let rust = Self.registry.type(of: Array("fn main() {}\n".utf8), name: "main.rs")
        #expect(rust.identifier == "org.freedesktop.mime.text.rust")
        let rustIsText = Self.registry.conforms(rust, to: .plainText)
        #expect(rustIsText)
        // A whole file name shared-mime-info knows.
        let make = Self.registry.type(of: Array("all:\n\tcc x.c\n".utf8), name: "Makefile")
        let makeIsText = Self.registry.conforms(make, to: .text)
        #expect(make.identifier == "org.freedesktop.mime.text.x-makefile" && makeIsText)
        // A subclass of a known type conforms to it: a Jupyter notebook is JSON.
        let notebook = Self.registry.type(of: Array("{}\n".utf8), name: "x.ipynb")
        let isJSON = Self.registry.conforms(notebook, to: "public.json")
        #expect(isJSON)
        // Image formats keep their names: SVG is XML to shared-mime-info.
        #expect(Self.registry.type(forFilename: "a.svg") == .svg)
        #expect(ImageThumbnailProvider().contentTypes.isSuperset(of: [rust, make, notebook, "public.c-source"]))
    }

    @Test func binaryFilesAreNeverText() {
        // NULs, or control bytes no text has: `public.data` whatever the name says.
        #expect(Self.registry.type(of: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0, 0, 0], name: "notes.txt") == .data)
        #expect(Self.registry.type(of: Array("abc\u{01}\u{02}def".utf8), name: "x.c") == .data)
        // 8-bit text needs a name that says text; UTF-16 needs its byte-order mark.
        let latin1: [UInt8] = Array("Caf".utf8) + [0xE9, 0x0A]
        #expect(Self.registry.type(of: latin1, name: "menu.txt") == .plainText)
        #expect(Self.registry.type(of: latin1, name: "menu") == .data)
        #expect(Self.registry.type(of: [0xFF, 0xFE, 0x48, 0x00, 0x69, 0x00], name: "hi") == .plainText)
        #expect(Self.registry.type(of: [0x48, 0x00, 0x69, 0x00], name: "hi") == .data)
    }

    @Test func fontTypesComeFromMagicAndName() throws {
        let ttf = try Array(Data(contentsOf: URL(fileURLWithPath: Self.dejaVu)))
        #expect(Self.registry.type(of: Array(ttf.prefix(4096)), name: "DejaVuSans.ttf").identifier == "public.truetype-ttf-font")
        // TrueType's version (00 01 00 00) is too common to trust without the name.
        #expect(Self.registry.type(of: Array(ttf.prefix(4096)), name: "blob") == .data)
        let otf = try Array(Data(contentsOf: URL(fileURLWithPath: Self.cantarell)).prefix(4096))
        #expect(Self.registry.type(of: otf, name: "x").identifier == "public.opentype-font")
        let isFont = Self.registry.conforms("public.opentype-font", to: .font)
        #expect(isFont)
    }

    /// Through `warm` and `search`, in real processes: text and fonts get thumbnails and their
    /// types and family in the index, no pixel size; a binary blob gets neither.
    @Test func warmMakesPagesAndSamplesAndIndexesThem() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree"), cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        try dir.write("tree/main.c", Array("#include <stdio.h>\nint main(void) { puts(\"hi\"); }\n".utf8))
        try dir.write("tree/notes.txt", Array("Shopping: bread, milk\n".utf8))
        try dir.write("tree/blob.bin", (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        let font = try dir.write("tree/Sans.ttf", Array(Data(contentsOf: URL(fileURLWithPath: Self.dejaVu))))
        func run(_ arguments: [String]) throws -> [String] {
            let child = try ChildProcess(program: "thumbcache", arguments: arguments + ["--cache", cache])
            let (end, stderr) = child.wait()
            #expect(end == .exited(0), "\(arguments): \(stderr)")
            return child.output
        }
        let warm = try run(["warm", tree, "--json"]).joined(separator: "\n")
        #expect(warm.contains("\"generated\" : 3") && warm.contains("\"notSupported\" : 1"), "\(warm)")
        #expect(try run(["search", #"kMDItemContentTypeTree == "public.plain-text""#, "--count"]) == ["2"])
        #expect(try run(["search", #"kMDItemContentTypeTree == "public.source-code""#]) == [tree + "/main.c"])
        #expect(try run(["search", #"kMDItemFonts == "DejaVu Sans""#]) == [font])
        #expect(try run(["search", "kMDItemPixelWidth > 0", "--count"]) == ["0"])
    }

    // MARK: Text pages

    /// Samples with ink on them (glyphs small enough are grey, not black).
    static func ink(_ image: RGBAImage) -> Int {
        stride(from: 0, to: image.pixels.count, by: 4).filter { image.pixels[$0] < 192 }.count
    }

    static func page(_ dir: TemporaryDirectory, _ name: String, _ bytes: [UInt8]) throws -> RGBAImage {
        try pool.thumbnail(ofFileAt: dir.write(name, bytes), options: box, format: .text).image
    }

    @Test func aTextFileIsAPageOfItsLines() throws {
        let dir = TemporaryDirectory()
        let code = (1...60).map { "let value\($0) = compute(\($0)) // line \($0)" }.joined(separator: "\n")
        let a = try Self.page(dir, "a.swift", Array(code.utf8))
        // Letter's shape, fitted to the box.
        #expect(a.height == 320 && a.width == 247)
        #expect(Self.ink(a) > 1500, "glyphs drawn: \(Self.ink(a)) dark samples")
        // Another text draws differently; the same text alike.
        let b = try Self.page(dir, "b.txt", Array(String(repeating: "Quite different words here.\n", count: 60).utf8))
        let differing = zip(a.pixels, b.pixels).filter { abs(Int($0) - Int($1)) > 64 }.count
        #expect(differing > 3000, "\(differing) samples differ")
        #expect(try Self.page(dir, "c.swift", Array(code.utf8)).pixels == a.pixels)
        // The page is white with a grey edge, and no text at all is a blank page.
        let empty = try Self.page(dir, "blank.txt", Array("\n".utf8))
        #expect(Self.ink(empty) == 0 && empty.pixels[(160 * empty.width + 124) * 4] == 255 && empty.pixels[0] < 230)
    }

    @Test func encodingsAreReadRight() throws {
        let dir = TemporaryDirectory()
        let text = "Café, naïve, Straße — ₤ ¼\nΑθήνα\n"
        let utf8 = try Self.page(dir, "utf8.txt", Array(text.utf8))
        #expect(Self.ink(utf8) > 100)
        let le: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let be: [UInt8] = [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        for (name, bytes) in [("le.txt", le), ("be.txt", be), ("bom.txt", bom)] {
            #expect(try Self.page(dir, name, bytes).pixels == utf8.pixels, "\(name)")
        }
        // Latin-1 (as Windows-1252) of the Latin part, against its UTF-8.
        let latin = "Café, naïve, Straße ¼\r\n"
        let latin1 = try Self.page(dir, "latin1.txt", latin.unicodeScalars.map { UInt8($0.value) })
        #expect(try Self.page(dir, "latin-utf8.txt", Array(latin.utf8)).pixels == latin1.pixels)
    }

    /// Characters the monospaced font lacks come from the fallback font, CJK two cells wide: a
    /// Japanese note shows its glyphs, and 32 of them fill a line as 64 Latin letters do.
    @Test func cjkTextIsDrawnFromTheFallbackFont() throws {
        let dir = TemporaryDirectory()
        let japanese = try Self.page(dir, "note.txt", Array("日本語のテキスト\n東京と大阪\n".utf8))
        #expect(Self.ink(japanese) > 150, "glyphs drawn: \(Self.ink(japanese)) dark samples")
        // As many characters in the same places: only the glyphs themselves can tell them apart
        // (the monospaced font alone draws each as the same box).
        #expect(try Self.page(dir, "hanzi.txt", Array("中文文本的一些字\n北京和上海\n".utf8)).pixels != japanese.pixels)
        // Two cells each: the 33rd wide character of a line is past the 64th column.
        let line = String(repeating: "漢", count: 32)
        #expect(try Self.page(dir, "wide.txt", Array((line + "字字字\n").utf8)).pixels == Self.page(dir, "full.txt", Array((line + "\n").utf8)).pixels)
    }

    @Test func tabsExpandAndLongLinesClip() throws {
        let dir = TemporaryDirectory()
        let tabs = try Self.page(dir, "tabs.c", Array("\tint x;\nab\tc\n".utf8))
        #expect(try Self.page(dir, "spaces.c", Array("        int x;\nab      c\n".utf8)).pixels == tabs.pixels)
        // Past the 64th column nothing shows.
        let long = String(repeating: "0123456789", count: 6) + "abcd"
        let clipped = try Self.page(dir, "clipped.txt", Array((long + "\n").utf8))
        #expect(try Self.page(dir, "longer.txt", Array((long + String(repeating: "WXYZ", count: 500) + "\n").utf8)).pixels == clipped.pixels)
        #expect(try Self.page(dir, "crlf.txt", Array((long + "\r\nnext\r\n").utf8)).pixels
                == Self.page(dir, "lf.txt", Array((long + "\nnext\n").utf8)).pixels)
    }

    @Test func binaryBytesAreAnErrorNotAPage() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("fake.txt", Array("text at first".utf8) + [0, 1, 2, 3] + Array("then binary".utf8))
        #expect {
            try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: .text)
        } throws: { error in
            guard let failure = error as? ImagingError, case .corrupt(let why) = failure.reason else { return false }
            return failure.path == path && why.contains("binary")
        }
        // The parent's type never overrides what the bytes say: a PNG named as text is a PNG.
        let png = try dir.write("image.txt", ImageEncoder.png(TestPictures.source()))
        #expect(try Self.pool.thumbnail(ofFileAt: png, options: Self.box, format: .text).info.format == .png)
    }

    /// Only the first 64 KiB are read, and a file above 64 MiB is keyed by samples: a 2 GB log
    /// (sparse here, its text up front) gets its page like a short note, through `get`.
    @Test func aTwoGigabyteTextFileIsCheap() throws {
        let dir = TemporaryDirectory()
        let path = dir.appending("huge.log")
        let head = (1...2000).map { "2026-11-24 12:00:\($0 % 60) service started worker \($0)" }.joined(separator: "\n") + "\n"
        _ = FileManager.default.createFile(atPath: path, contents: Data(head.utf8))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 2 << 30)
        try handle.close()
        let out = dir.appending("huge.png")
        let child = try ChildProcess(program: "thumbcache", arguments: ["get", path, "--size", "256", "-o", out, "--json",
                                                                        "--cache", dir.appending("cache")])
        let (end, stderr) = child.wait()
        #expect(end == .exited(0), "\(stderr)")
        #expect(child.output.joined().contains("\"thumbnail\""))
        let image = try ImageDecoder.png(Array(Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(image.height == 256 && Self.ink(image) > 200)
    }

    // MARK: Fonts

    static let dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    static let dejaVuSerif = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf"
    static let cantarell = "/usr/share/fonts/opentype/cantarell/Cantarell-Regular.otf"

    /// fontTools (python3-fonttools) rewrites a TrueType font as WOFF, WOFF2, or a collection.
    static func fontTools(_ script: String) throws {
        _ = try FixtureTools.run("/usr/bin/python3", ["-c", "from fontTools.ttLib import TTFont, TTCollection\n" + script])
    }

    @Test func aFontShowsASampleInItselfAndIsIndexedByFamily() throws {
        let dir = TemporaryDirectory()
        let woff = dir.appending("DejaVuSans.woff"), woff2 = dir.appending("DejaVuSans.woff2"), ttc = dir.appending("pair.ttc")
        try Self.fontTools("""
            for flavor, out in (("woff", "\(woff)"), ("woff2", "\(woff2)")):
                f = TTFont("\(Self.dejaVu)"); f.flavor = flavor; f.save(out)
            c = TTCollection(); c.fonts = [TTFont("\(Self.dejaVu)"), TTFont("\(Self.dejaVuSerif)")]; c.save("\(ttc)")
            """)
        let sans = try Self.pool.thumbnail(ofFileAt: Self.dejaVu, options: Self.box, format: nil)
        #expect(sans.image.width == 320 && sans.image.height == 320)
        #expect(Self.ink(sans.image) > 4000, "ink: \(Self.ink(sans.image))")
        #expect(sans.info.media?.fonts == ["DejaVu Sans"] && sans.info.media?.title == "DejaVu Sans Book")
        // The same outlines in WOFF, WOFF2 and a collection's first face draw the same sample.
        for path in [woff, woff2, ttc] {
            let made = try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
            let differing = zip(made.image.pixels, sans.image.pixels).filter { abs(Int($0) - Int($1)) > 16 }.count
            #expect(differing < 200, "\(path): \(differing) samples differ")
            #expect(made.info.media?.fonts == ["DejaVu Sans"])
        }
        // Another face is another drawing; CFF outlines (OpenType) draw too.
        let serif = try Self.pool.thumbnail(ofFileAt: Self.dejaVuSerif, options: Self.box, format: nil)
        #expect(zip(serif.image.pixels, sans.image.pixels).filter { abs(Int($0) - Int($1)) > 64 }.count > 4000)
        let otf = try Self.pool.thumbnail(ofFileAt: Self.cantarell, options: Self.box, format: nil)
        #expect(Self.ink(otf.image) > 3000 && otf.info.media?.fonts == ["Cantarell"])
    }

    @Test func brokenFontsFailCleanly() throws {
        let dir = TemporaryDirectory()
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Self.dejaVu)))
        var inputs: [(String, [UInt8])] = [0.001, 0.05, 0.5, 0.97].map { ("cut-\($0).ttf", Array(bytes.prefix(Int(Double(bytes.count) * $0)))) }
        // Every table's bytes overwritten by noise, the directory kept: FreeType meets lying tables.
        var noisy = bytes
        var random = SeededRandom(seed: 17)
        for i in 300..<noisy.count where i % 3 == 0 { noisy[i] = UInt8(truncatingIfNeeded: random.next()) }
        inputs.append(("noise.ttf", noisy))
        // A directory claiming tables far past the end.
        var lying = Array(bytes.prefix(2048))
        for t in 0..<20 { let o = 12 + t * 16 + 8; lying[o] = 0x7F; lying[o + 1] = 0xFF }
        inputs.append(("lying.ttf", lying))
        for (name, data) in inputs {
            let path = try dir.write(name, data)
            do {
                _ = try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
            } catch let error as ImagingError {
                #expect(error.path == path)
            } catch let error as WorkerFailure {
                Issue.record("\(name): the worker failed: \(error)")
            }
        }
    }
}
