import CThumbcacheQOI
import Foundation
import Testing
import ThumbcacheCodecs
import ThumbcacheHeavyCodecs
@testable import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// The formats read by parsers of our own (BMP, ICO, Netpbm, TGA, QOI), SVG, camera raw, and a warm of every
/// format (ImageFormatTests.swift has the helpers and the formats with libraries of their own).
extension ImageFormatTests {
    // MARK: BMP, ICO, Netpbm, TGA (parsers of our own)

    @Test(arguments: [
        ("rgb24.bmp", "photo", ["BMP3:"]),
        ("alpha32.bmp", "clear", ["BMP:"]),
        ("rgb565.bmp", "photo", ["-define", "bmp:subtype=RGB565", "BMP:"]),
        ("palette8.bmp", "art", ["-type", "Palette", "BMP3:"]),
        ("rle8.bmp", "art", ["-type", "Palette", "-compress", "RLE", "BMP3:"]),
        ("rle4.bmp", "art", ["-colors", "16", "-compress", "RLE", "BMP3:"]),
        ("raw.ppm", "photo", ["PPM:"]),
        ("plain.ppm", "photo", ["-compress", "none", "PPM:"]),
        ("sixteen.ppm", "photo", ["-depth", "16", "PPM:"]),
        ("gray.pgm", "gray", ["PGM:"]),
        ("bits.pbm", "bits", ["PBM:"]),
        ("plain.pbm", "bits", ["-compress", "none", "PBM:"]),
        ("alpha.pam", "clear", ["PAM:"]),
    ])
    func simpleFormats(name: String, picture: String, options: [String]) throws {
        let dir = TemporaryDirectory()
        var image: RGBAImage
        switch picture {
        case "clear": image = TestPictures.source(alpha: true)
        case "art": image = TestPictures.graphic(transparent: false)
        case "gray", "bits":
            image = TestPictures.source()
            for p in stride(from: 0, to: image.pixels.count, by: 4) {
                var y = UInt8((Int(image.pixels[p]) * 3 + Int(image.pixels[p + 1]) * 6 + Int(image.pixels[p + 2])) / 10)
                if picture == "bits" { y = y > 110 ? 255 : 0 }
                (image.pixels[p], image.pixels[p + 1], image.pixels[p + 2]) = (y, y, y)
            }
        default: image = TestPictures.source()
        }
        let path = try FixtureTools.fixture(dir, name, from: image, "convert") { input, output in
            [input] + (image.hasAlpha ? [] : ["-alpha", "off"]) + options.dropLast() + [options.last! + output]
        }
        let info = try Self.expectMatches(path, image, minimum: picture == "photo" && name.contains("565") ? 33 : 40)
        #expect(info.pixelWidth == 480 && info.pixelHeight == 320)
    }

    /// TGA through Pillow (Debian's python3-pil): ImageMagick 6 writes rows top-down under a
    /// bottom-left origin, which Pillow and the specification read upside down.
    @Test(arguments: [
        ("rgb.tga", "photo", "RGB", false), ("alpha.tga", "clear", "RGBA", false), ("rle.tga", "clear", "RGBA", true),
        ("palette.tga", "art", "P", false), ("palette-rle.tga", "art", "P", true), ("gray.tga", "gray", "L", true),
    ])
    func tgaVariants(name: String, picture: String, mode: String, rle: Bool) throws {
        let dir = TemporaryDirectory()
        var image = picture == "clear" ? TestPictures.source(alpha: true) : picture == "art" ? TestPictures.graphic(transparent: false) : TestPictures.source()
        if picture == "gray" {
            for p in stride(from: 0, to: image.pixels.count, by: 4) {
                let y = image.pixels[p + 1]
                (image.pixels[p], image.pixels[p + 2]) = (y, y)
            }
        }
        let path = try FixtureTools.fixture(dir, name, from: image, "/usr/bin/python3", FixtureTools.pillowTGA(mode: mode, rle: rle))
        let info = try Self.expectMatches(path, image, minimum: 40)
        #expect(info.format == .tga && info.pixelWidth == 480 && info.hasAlpha == image.hasAlpha)
    }

    /// An RLE packet may run on past the end of a row (old writers did): a repeated pixel and then
    /// literal pixels, each crossing a row, in a 4 × 3 bottom-up image.
    @Test func tgaRunsCrossRows() throws {
        let dir = TemporaryDirectory()
        var tga: [UInt8] = [0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 3, 0, 24, 0]
        tga += [0x80 | 5, 0, 0, 255]  // six red pixels (BGR): the bottom row and half the middle one
        tga += [5] + (0..<6).flatMap { (i: Int) -> [UInt8] in [UInt8(i * 40), 0, 0] }  // six blues
        let path = try dir.write("runs.tga", tga)
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let source = try TGASource(descriptor: descriptor, name: path)
        _ = try source.start(shrink: 1, fast: false)
        var rows: [[UInt8]] = []
        try source.readRows { rows.append(Array(UnsafeBufferPointer(start: $0, count: 16))) }
        let red: [UInt8] = [255, 0, 0, 255]
        #expect(rows[2] == red + red + red + red)
        #expect(rows[1] == red + red + [0, 0, 0, 255] + [0, 0, 40, 255])
        #expect(rows[0] == [0, 0, 80, 255, 0, 0, 120, 255, 0, 0, 160, 255, 0, 0, 200, 255])
    }

    /// QOI through the image worker: written by the format's reference encoder (the shim's
    /// qoi.h), lossless, so the thumbnail is the source resized.
    @Test func qoiIsDecodedByTheImageWorker() throws {
        let dir = TemporaryDirectory()
        for (name, image) in [("clear.qoi", TestPictures.source(alpha: true)), ("photo.qoi", TestPictures.source())] {
            let path = try dir.write(name, try Self.qoi(image))
            let info = try Self.expectMatches(path, image, minimum: 45)
            #expect(info.format == .qoi && info.pixelWidth == 480 && info.hasAlpha == image.hasAlpha)
        }
    }

    static func qoi(_ image: RGBAImage) throws -> [UInt8] {
        var length = 0
        let encoded = try #require(tcqoi_encode_rgba(image.pixels, UInt32(image.width), UInt32(image.height), image.hasAlpha ? 4 : 3, &length))
        defer { tcqoi_free(encoded) }
        return Array(UnsafeBufferPointer(start: encoded, count: length))
    }

    /// The largest image of an icon (a PNG entry at 256, DIB entries below), with its alpha; a
    /// DIB entry's AND mask makes its transparent pixels.
    @Test func iconsShowTheirLargestImage() throws {
        let dir = TemporaryDirectory()
        let clear = TestPictures.source(width: 256, height: 256, alpha: true)
        let icon = try FixtureTools.fixture(dir, "app.ico", from: clear, "convert") { [$0, "-define", "icon:auto-resize=256,48,16", $1] }
        let info = try Self.expectMatches(icon, clear)
        #expect(info.format == .ico && info.pixelWidth == 256 && info.hasAlpha)
        let small = TestPictures.graphic(width: 48, height: 48)
        let dib = try FixtureTools.fixture(dir, "small.ico", from: small, "convert") { [$0, "-define", "icon:auto-resize=48,16", $1] }
        try Self.expectMatches(dib, small, minimum: 40)
    }

    /// TGA has no signature: a .tga name with a plausible header is one; the same bytes under
    /// another name are data, and a .tga name on other bytes is not taken for TGA.
    @Test func tgaNeedsItsNameAndAPlausibleHeader() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source()
        let path = try FixtureTools.fixture(dir, "photo.tga", from: photo, "/usr/bin/python3", FixtureTools.pillowTGA())
        let types = ContentTypeRegistry()
        #expect(types.type(ofFileAt: path) == ContentType("com.truevision.tga-image"))
        let renamed = dir.appending("photo.bin")
        try FileManager.default.copyItem(atPath: path, toPath: renamed)
        #expect(types.type(ofFileAt: renamed) == .data)
        #expect(throws: ImagingError.self) { try Self.pool.thumbnail(ofFileAt: renamed, options: Self.box, format: nil) }
        let fake = try dir.write("fake.tga", Array("not an image at all, though named like one".utf8))
        #expect(types.type(ofFileAt: fake) == .plainText)
    }

    // MARK: SVG

    /// Axis-aligned rectangles on a 40 × 20 document, a quarter left transparent: drawn at 4× its
    /// size every edge falls on a pixel boundary, so the reference is exact.
    static func flatReference(scale: Int) -> RGBAImage {
        var image = RGBAImage(width: 40 * scale, height: 20 * scale, pixels: [UInt8](repeating: 0, count: 40 * 20 * scale * scale * 4), hasAlpha: true)
        func fill(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ c: (UInt8, UInt8, UInt8)) {
            for row in (y * scale)..<((y + h) * scale) {
                for column in (x * scale)..<((x + w) * scale) {
                    let i = (row * image.width + column) * 4
                    (image.pixels[i], image.pixels[i + 1], image.pixels[i + 2], image.pixels[i + 3]) = (c.0, c.1, c.2, 255)
                }
            }
        }
        fill(0, 0, 30, 20, (0x30, 0x60, 0xC0))
        fill(5, 5, 10, 5, (0xF0, 0xD0, 0x20))
        fill(30, 10, 10, 10, (0x20, 0xA0, 0x40))
        return image
    }

    /// Drawn at the box's size (a 40-pixel document fills a 160 box sharply), from width/height
    /// or from the viewBox alone; found by its content whatever its name.
    @Test func svgIsDrawnAtTheOutputSize() throws {
        let dir = TemporaryDirectory()
        let sized = try dir.write("flat.svg", Array(TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "width=\"40\" height=\"20\"")
            .replacingOccurrences(of: "IMAGE", with: "").utf8))
        let info = try Self.expectMatches(sized, Self.flatReference(scale: 4), minimum: 40, options: ThumbnailOptions(maxWidth: 160, maxHeight: 160))
        #expect(info.format == .svg && info.pixelWidth == 40 && info.pixelHeight == 20)
        let viewBoxOnly = try dir.write("drawing", Array(TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "")
            .replacingOccurrences(of: "IMAGE", with: "").utf8))
        #expect(ContentTypeRegistry().type(ofFileAt: viewBoxOnly) == .svg)
        try Self.expectMatches(viewBoxOnly, Self.flatReference(scale: 4), minimum: 40, options: ThumbnailOptions(maxWidth: 160, maxHeight: 160))
    }

    /// A reference to a local image (by absolute path and by file URL) and one to a loopback
    /// server draw nothing: the transparent quarter stays transparent and nobody connects.
    @Test func svgFollowsNoFileOrNetworkReference() throws {
        let dir = TemporaryDirectory()
        let red = RGBAImage(width: 8, height: 8, pixels: [UInt8](repeating: 255, count: 256).enumerated().map { $0.offset % 4 == 1 || $0.offset % 4 == 2 ? 0 : 255 }, hasAlpha: false)
        let png = try dir.write("red.png", ImageEncoder.png(red))
        let listener = try LoopbackListener()
        let images = ["file://\(png)", png, "http://127.0.0.1:\(listener.port)/red.png"].map {
            "<image href=\"\($0)\" xlink:href=\"\($0)\" x=\"30\" y=\"0\" width=\"10\" height=\"10\"/>"
        }.joined(separator: "\n")
        let text = TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"40\" height=\"20\"")
            .replacingOccurrences(of: "IMAGE", with: images)
        let path = try dir.write("refs.svg", Array(text.utf8))
        try Self.expectMatches(path, Self.flatReference(scale: 4), minimum: 40, options: ThumbnailOptions(maxWidth: 160, maxHeight: 160))
        #expect(!listener.wasReached)
    }

    // MARK: Camera raw

    /// Luminance correlation of two same-sized images: near 1 when they show the same picture,
    /// whatever gain, white balance or tone curve a raw converter applied.
    static func correlation(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        func luma(_ i: RGBAImage) -> [Double] {
            stride(from: 0, to: i.pixels.count, by: 4).map { (p: Int) -> Double in
                let r: Double = Double(i.pixels[p]), g: Double = Double(i.pixels[p + 1]), b: Double = Double(i.pixels[p + 2])
                return 0.3 * r + 0.59 * g + 0.11 * b
            }
        }
        let x = luma(a), y = luma(b)
        let mx = x.reduce(0, +) / Double(x.count), my = y.reduce(0, +) / Double(y.count)
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for k in x.indices {
            sxy += (x[k] - mx) * (y[k] - my)
            sxx += (x[k] - mx) * (x[k] - mx)
            syy += (y[k] - my) * (y[k] - my)
        }
        return sxy / (sxx * syy).squareRoot()
    }

    /// The embedded preview is what shows (the raw pixels here are mirrored, so decoding them
    /// instead would fail the comparison), turned by the raw file's orientation; the camera's
    /// metadata is read; the type is told by the DNGVersion tag, not the name.
    @Test func rawFilesShowTheirEmbeddedPreviewTurnedByTheirOrientation() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source()
        let dng = DNGFixture(raw: TestPictures.source(width: 720, height: 480).mirrored(), preview: try ImageEncoder.jpeg(photo, quality: 95),
                             orientation: 6)
        let path = try dir.write("IMG_0001.tif", dng.build())
        #expect(ContentTypeRegistry().type(ofFileAt: path) == ContentType("com.adobe.raw-image"))
        #expect(ContentTypeRegistry().conforms(ContentType("com.adobe.raw-image"), to: .cameraRawImage))
        let info = try Self.expectMatches(path, Self.displayed(photo, orientation: 6))
        #expect(info.format == .dng && info.orientation == .right && info.pixelWidth == 480 && info.pixelHeight == 720)
        #expect(info.exif?.make == "TestCam" && info.exif?.model == "DNG 1")
    }

    /// Without a preview, a half-size demosaic: the same picture (LibRaw's tone curve and white
    /// balance differ from the source's, so it is compared by correlation), turned.
    @Test func rawFilesWithoutAPreviewAreDecodedAtHalfSize() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(width: 720, height: 480)
        let path = try dir.write("linear.dng", DNGFixture(raw: photo, preview: nil, orientation: 8).build())
        let made = try Self.pool.thumbnail(ofFileAt: path, options: Self.box, format: nil)
        let expected = Thumbnailer.resize(Self.displayed(photo, orientation: 8), options: Self.box)
        try #require(made.image.width == expected.width && made.image.height == expected.height)
        #expect(Self.correlation(made.image, expected) > 0.95)
        #expect(made.info.orientation == .left)
    }

    /// TIFF containers are told apart by IFD0: DNGVersion, else the Make (NEF, ARW); a plain
    /// TIFF stays a TIFF.
    @Test func rawKindsAreDetectedByTheirBytes() throws {
        func tiffHead(make: String) -> [UInt8] {
            let value: [UInt8] = Array(make.utf8) + [0]
            var head: [UInt8] = Array("II".utf8)
            head += [42, 0, 8, 0, 0, 0, 1, 0]  // IFD0 at 8, one entry
            head += [0x0F, 0x01, 2, 0, UInt8(value.count), 0, 0, 0]  // Make, ASCII, count
            head += [26, 0, 0, 0, 0, 0, 0, 0]  // its offset; no next IFD
            return head + value
        }
        let types = ContentTypeRegistry()
        #expect(types.type(of: tiffHead(make: "NIKON CORPORATION"), name: "x") == ContentType("com.nikon.raw-image"))
        #expect(types.type(of: tiffHead(make: "SONY"), name: "x") == ContentType("com.sony.arw-raw-image"))
        #expect(types.type(of: tiffHead(make: "Acme Scanners"), name: "x") == .tiff)
        #expect(types.type(of: Array("FUJIFILMCCD-RAW 0201".utf8), name: "x") == ContentType("com.fuji.raw-image"))
        #expect(types.type(of: [0, 0, 0, 24] + Array("ftypcrx ".utf8), name: "x") == ContentType("com.canon.cr3-raw-image"))
        #expect(types.type(of: Array("II*\0\u{10}\0\0\0CR\u{2}\0".utf8), name: "x") == ContentType("com.canon.cr2-raw-image"))
        #expect(types.type(of: Array("IIRO\u{8}\0\0\0".utf8), name: "x") == ContentType("com.olympus.raw-image"))
        #expect(types.type(of: Array("IIU\0\u{8}\0\0\0".utf8), name: "x") == ContentType("com.panasonic.rw2-raw-image"))
        // A name alone never makes a raw file.
        #expect(types.type(of: Array("not a raw file".utf8), name: "x.nef") == .plainText)
    }

    // MARK: A warm of every format

    /// `thumbcache warm` on a tree of every format makes every thumbnail (in the sandboxed
    /// worker) and indexes what each file's header says; `search` finds them by it.
    @Test func warmThumbnailsAndIndexesEveryFormat() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree"), cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let photo = TestPictures.source(), clear = TestPictures.source(alpha: true), art = TestPictures.graphic(transparent: false)
        let a = try dir.write("a.png", ImageEncoder.png(art)), b = try dir.write("b.png", ImageEncoder.png(photo))
        let gif = tree + "/anim.gif"
        try FixtureTools.run("convert", ["-delay", "10", a, b, "+dither", gif])
        let webp = try FixtureTools.fixture(dir, "tree/clear.webp", from: clear, "cwebp") { ["-quiet", "-lossless", $0, "-o", $1] }
        let tiff = try FixtureTools.fixture(dir, "tree/deep.tif", from: photo, "convert") { [$0, "-alpha", "off", "-depth", "16", $1] }
        let heic = try FixtureTools.fixture(dir, "tree/phone.heic", from: photo, "heif-enc") { ["-q", "90", "-o", $1, $0] }
        try FixtureTools.run("exiftool", ["-q", "-overwrite_original", "-Make=TestCam", heic])
        let dng = try dir.write("tree/camera.dng", DNGFixture(raw: TestPictures.source(width: 720, height: 480),
                                                               preview: try ImageEncoder.jpeg(photo, quality: 90)).build())
        let others: [String] = [
            try FixtureTools.fixture(dir, "tree/photo.jxl", from: photo, "cjxl") { [$0, $1, "--quiet"] },
            try FixtureTools.fixture(dir, "tree/photo.avif", from: photo, "convert") { [$0, "-alpha", "off", $1] },
            try FixtureTools.fixture(dir, "tree/photo.bmp", from: photo, "convert") { [$0, "-alpha", "off", "BMP3:" + $1] },
            try FixtureTools.fixture(dir, "tree/photo.ppm", from: photo, "convert") { [$0, "-alpha", "off", $1] },
            try FixtureTools.fixture(dir, "tree/icon.ico", from: TestPictures.source(width: 64, height: 64, alpha: true), "convert") { [$0, $1] },
            try FixtureTools.fixture(dir, "tree/photo.tga", from: photo, "/usr/bin/python3", FixtureTools.pillowTGA()),
            try dir.write("tree/photo.qoi", try Self.qoi(photo)),
            try dir.write("tree/drawing.svg", Array(TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "")
                .replacingOccurrences(of: "IMAGE", with: "").utf8)),
        ]
        let child = try ChildProcess(program: "thumbcache", arguments: ["warm", "--json", tree, "--cache", cache])
        let (end, stderr) = child.wait()
        #expect(end == .exited(0), "warm failed: \(stderr)")
        let summary = try JSONDecoder().decode(WarmReport.self, from: Data(child.output.joined(separator: "\n").utf8))
        #expect(summary.failures.isEmpty, "\(summary.failures)")
        #expect(summary.generated == 5 + others.count, "\(child.output.joined(separator: "\n"))")
        func search(_ query: String) throws -> Set<String> {
            let c = try ChildProcess(program: "thumbcache", arguments: ["search", query, "--cache", cache])
            _ = c.wait()
            return Set(c.output)
        }
        #expect(try search("kMDItemFrameCount == 2") == [gif])
        #expect(try search(#"kMDItemColorSpace == "Palette""#) == [gif])
        #expect(try search("kMDItemHasAlphaChannel == 1").contains(webp))
        let deep = try search("kMDItemBitsPerSample == 16")
        #expect(deep == [tiff, dng], "\(deep)")  // the raw file's sensor data is 16-bit
        #expect(try search(#"kMDItemAcquisitionMake == "TestCam""#) == [heic, dng])
        #expect(try search(#"kMDItemContentTypeTree == "public.camera-raw-image""#) == [dng])
        let sized = try search("kMDItemPixelWidth == 480 && kMDItemPixelHeight == 320")
        #expect(sized.count == 10, "\(sized.sorted())")
    }

    /// An --in-process warm decodes PNG and JPEG only: a WebP fails with a reason saying so, and
    /// that failure is not remembered against its bytes, so the next (sandboxed) warm makes it.
    @Test func inProcessWarmsLeaveWorkerOnlyFormatsForTheWorker() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree"), cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        _ = try FixtureTools.fixture(dir, "tree/photo.webp", from: TestPictures.source(), "cwebp") { ["-quiet", $0, "-o", $1] }
        try FileManager.default.removeItem(atPath: dir.appending("tree-photo.webp.source.png"))
        func warm(_ extra: [String]) throws -> WarmReport {
            let child = try ChildProcess(program: "thumbcache", arguments: ["warm", "--json", tree, "--cache", cache] + extra)
            _ = child.wait()
            return try JSONDecoder().decode(WarmReport.self, from: Data(child.output.joined(separator: "\n").utf8))
        }
        let local = try warm(["--in-process"])
        #expect(local.generated == 0)
        #expect(local.failures.keys.contains { $0.contains("decoded only in the sandboxed worker") }, "\(local.failures)")
        #expect(try warm([]).generated == 1)
    }
}
