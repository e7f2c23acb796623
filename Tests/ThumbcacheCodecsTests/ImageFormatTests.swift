import CThumbcacheQOI
import Foundation
import Testing
import ThumbcacheCodecs
import ThumbcacheHeavyCodecs
@testable import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// Every catalogued format through the real sandboxed worker, on fixtures made at test time by
/// Debian's encoders (ImageMagick, cwebp, img2webp, libtiff's tools, heif-enc; `Tools/setup`
/// installs them) from a source image drawn here.
///
/// The reference is that source: its pixels resized by the same filter. No decoder of the
/// format under test is involved in the reference, so this checks more than agreeing with a
/// second decoder would: the pixels, the orientation and the alpha the encoder was given come back.
struct ImageFormatTests {
    /// Shared by the tests, which run in parallel: one worker per core.
    static let pool = WorkerPool(.init(workers: 2))
    static let box = ThumbnailOptions(maxWidth: 160, maxHeight: 160)

    /// The worker's thumbnail of `path` matches `reference` resized alike: size, alpha, ≥ `minimum` dB.
    @discardableResult
    static func expectMatches(_ path: String, _ reference: RGBAImage, minimum: Double = 35,
                              options: ThumbnailOptions = box, sourceLocation: SourceLocation = #_sourceLocation) throws -> ImageInfo {
        let made = try pool.thumbnail(ofFileAt: path, options: options, format: nil)
        let expected = Thumbnailer.resize(reference, options: options)
        #expect(made.image.width == expected.width && made.image.height == expected.height,
                "\(path): \(made.image.width)×\(made.image.height), expected \(expected.width)×\(expected.height)",
                sourceLocation: sourceLocation)
        guard made.image.width == expected.width && made.image.height == expected.height else { return made.info }
        let db = TestPictures.premultipliedPSNR(made.image, expected)
        #expect(db >= minimum, "\(path): PSNR \(db) dB", sourceLocation: sourceLocation)
        #expect(made.image.hasAlpha == reference.hasAlpha, "\(path): alpha \(made.image.hasAlpha)", sourceLocation: sourceLocation)
        return made.info
    }

    /// The reference turned as EXIF orientation `o` displays it, for files that carry the tag.
    static func displayed(_ image: RGBAImage, orientation o: Int) -> RGBAImage {
        (Orientation(rawValue: o) ?? .up).apply(to: image)
    }

    // MARK: WebP

    @Test func webPLossyLosslessAlphaAndScaledDecode() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(), clear = TestPictures.source(alpha: true)
        let lossy = try FixtureTools.fixture(dir, "lossy.webp", from: photo, "cwebp") { ["-quiet", "-q", "95", $0, "-o", $1] }
        let info = try Self.expectMatches(lossy, photo)
        #expect(info.format == .webP && info.pixelWidth == 480 && info.pixelHeight == 320 && !info.hasAlpha)
        let lossless = try FixtureTools.fixture(dir, "alpha.webp", from: clear, "cwebp") { ["-quiet", "-lossless", "-exact", $0, "-o", $1] }
        #expect(try Self.expectMatches(lossless, clear).hasAlpha)
        let lossyAlpha = try FixtureTools.fixture(dir, "lossy-alpha.webp", from: clear, "cwebp") { ["-quiet", "-q", "95", $0, "-o", $1] }
        try Self.expectMatches(lossyAlpha, clear)
        // Large enough for use_scaling (the decode is 1/2 … 1/8 of the stored size).
        let large = TestPictures.source(width: 2400, height: 1600)
        let big = try FixtureTools.fixture(dir, "big.webp", from: large, "cwebp") { ["-quiet", "-q", "95", $0, "-o", $1] }
        try Self.expectMatches(big, large)
    }

    @Test func webPAnimatedGivesItsFirstFrameAndFrameCount() throws {
        let dir = TemporaryDirectory()
        let first = TestPictures.source(), second = Self.displayed(TestPictures.source(), orientation: 3)
        let a = try dir.write("a.png", ImageEncoder.png(first)), b = try dir.write("b.png", ImageEncoder.png(second))
        let path = dir.appending("anim.webp")
        try FixtureTools.run("img2webp", ["-lossless", a, b, a, "-o", path])
        let info = try Self.expectMatches(path, first)
        #expect(info.frameCount == 3)
    }

    @Test func webPEXIFOrientationIsApplied() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source()
        let path = try FixtureTools.fixture(dir, "turned.webp", from: photo, "cwebp") { ["-quiet", "-q", "95", $0, "-o", $1] }
        try FixtureTools.run("exiftool", ["-q", "-overwrite_original", "-Orientation#=6", path])
        let info = try Self.expectMatches(path, Self.displayed(photo, orientation: 6))
        #expect(info.orientation == .right && info.pixelWidth == 320 && info.pixelHeight == 480)
    }

    // MARK: GIF

    @Test func gifTransparencyInterlaceAndLocalColourTables() throws {
        let dir = TemporaryDirectory()
        let art = TestPictures.graphic()
        let plain = try FixtureTools.fixture(dir, "plain.gif", from: art, "convert") { [$0, "+dither", $1] }
        let info = try Self.expectMatches(plain, art)
        #expect(info.format == .gif && info.hasAlpha && info.colorSpace == "Palette" && info.frameCount == 1)
        let interlaced = try FixtureTools.fixture(dir, "interlaced.gif", from: art, "convert") { [$0, "+dither", "-interlace", "GIF", $1] }
        try Self.expectMatches(interlaced, art)
        // Two frames, each with its own (local) colour table; the first is what shows.
        let opaque = TestPictures.graphic(transparent: false)
        let a = try dir.write("a.png", ImageEncoder.png(opaque))
        let b = try dir.write("b.png", ImageEncoder.png(Self.displayed(TestPictures.source(), orientation: 2)))
        let animated = dir.appending("anim.gif")
        try FixtureTools.run("convert", ["-delay", "10", a, b, "+dither", "+map", animated])
        let animInfo = try Self.expectMatches(animated, opaque)
        #expect(animInfo.frameCount == 2)
    }

    /// A first frame smaller than the canvas and placed inside it: the rest of the canvas is
    /// transparent, on the frame's rows and off them.
    @Test func gifFrameSmallerThanItsCanvas() throws {
        let dir = TemporaryDirectory()
        let path = dir.appending("placed.gif")
        try FixtureTools.run("convert", ["-size", "40x30", "xc:red", "-set", "page", "100x80+50+20", path])
        let made = try Self.pool.thumbnail(ofFileAt: path, options: ThumbnailOptions(maxWidth: 100, maxHeight: 80), format: nil).image
        #expect(made.width == 100 && made.height == 80)
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(made.pixels[(y * made.width + x) * 4..<(y * made.width + x) * 4 + 4]) }
        #expect(pixel(70, 35) == [255, 0, 0, 255], "inside the frame")
        #expect(pixel(20, 35)[3] == 0, "left of the frame, on its rows")
        #expect(pixel(70, 5)[3] == 0, "above the frame")
    }

    // MARK: TIFF

    @Test(arguments: [
        ("lzw-strips", ["-compress", "lzw"]),
        ("deflate-tiles", ["-compress", "zip", "-define", "tiff:tile-geometry=64x64"]),
        ("jpeg-tiles", ["-compress", "jpeg", "-quality", "95", "-define", "tiff:tile-geometry=128x128"]),
        ("packbits", ["-compress", "rle"]),
        ("sixteen-bit", ["-depth", "16", "-compress", "zip"]),
        ("cmyk", ["-colorspace", "CMYK", "-depth", "8"]),
        ("gray", ["-colorspace", "Gray"]),
    ])
    func tiffVariants(name: String, options: [String]) throws {
        let dir = TemporaryDirectory()
        let gray = name == "gray"
        let photo = gray ? TestPictures.grayed(TestPictures.source()) : TestPictures.source()
        let path = try FixtureTools.fixture(dir, name + ".tif", from: photo, "convert") { [$0, "-alpha", "off"] + options + [$1] }
        let info = try Self.expectMatches(path, photo, minimum: name == "cmyk" ? 30 : 35)
        #expect(info.format == .tiff && info.pixelWidth == 480 && info.frameCount == 1)
        #expect(info.colorSpace == (name == "cmyk" ? "CMYK" : gray ? "Gray" : "RGB"))
        #expect(info.bitsPerSample == (name == "sixteen-bit" ? 16 : 8))
    }

    /// What libtiff's RGBA interface refuses, read from the stored strips or tiles: float samples
    /// (single and half precision, strips and tiles, with alpha) as display values, gray float
    /// data of any range stretched over its own, and 16-bit CMYK.
    @Test func tiffFloatSamplesAndSixteenBitCMYK() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(), clear = TestPictures.source(alpha: true)
        let float = ["-define", "quantum:format=floating-point"]
        let cases: [(String, RGBAImage, [String], Int, String)] = [
            ("float32.tif", photo, ["-alpha", "off"] + float + ["-depth", "32", "-compress", "zip"], 32, "RGB"),
            ("half.tif", photo, ["-alpha", "off"] + float + ["-depth", "16"], 16, "RGB"),
            ("float-tiles-alpha.tif", clear, float + ["-depth", "32", "-define", "tiff:tile-geometry=64x64"], 32, "RGB"),
            ("cmyk16.tif", photo, ["-alpha", "off", "-colorspace", "CMYK", "-depth", "16"], 16, "CMYK"),
        ]
        for (name, image, options, bits, space) in cases {
            let path = try FixtureTools.fixture(dir, name, from: image, "convert") { [$0] + options + [$1] }
            let info = try Self.expectMatches(path, image)
            #expect(info.bitsPerSample == bits && info.colorSpace == space, "\(name): \(info)")
        }
        // Elevations from 1000 to 3000 m as 32-bit floats (Pillow's mode F): the thumbnail shows
        // them stretched from their lowest to their highest.
        let gray = TestPictures.grayed(TestPictures.source())
        let lumas = stride(from: 0, to: gray.pixels.count, by: 4).map { Int(gray.pixels[$0]) }
        let (low, high) = (lumas.min() ?? 255, lumas.max() ?? 0)
        let elevations = try FixtureTools.fixture(dir, "elevations.tif", from: gray, "/usr/bin/python3") {
            ["-c", "import sys; from PIL import Image; Image.open(sys.argv[1]).convert('L').convert('F').point(lambda v: 1000 + v * 2000 / 255).save(sys.argv[2])", $0, $1]
        }
        var stretched = gray
        for p in stride(from: 0, to: gray.pixels.count, by: 4) {
            let v = UInt8((Double(Int(gray.pixels[p]) - low) / Double(high - low) * 255).rounded())
            (stretched.pixels[p], stretched.pixels[p + 1], stretched.pixels[p + 2]) = (v, v, v)
        }
        let info = try Self.expectMatches(elevations, stretched)
        #expect(info.bitsPerSample == 32 && info.colorSpace == "Gray")
        // HDR: float RGB from 0 to 2 (written by hand: no Debian tool here writes float colour
        // above 1). Up to 0.8 as is; above, the soft knee 0.8 + 0.2 (1 − e^(−(v − 0.8) / 0.2)).
        let hdr = try FixtureTools.fixture(dir, "hdr.tif", from: photo, "/usr/bin/python3") { ["-c", Self.floatTIFFWriter, $0, $1, "2"] }
        var toned = photo
        for p in toned.pixels.indices where p % 4 != 3 {
            var v = Double(photo.pixels[p]) / 255 * 2
            if v > 0.8 { v = 0.8 + 0.2 * (1 - exp(-(v - 0.8) / 0.2)) }
            toned.pixels[p] = UInt8(min(255, (v * 255).rounded()))
        }
        try Self.expectMatches(hdr, toned)
    }

    /// Writes argv[1]'s RGB as an uncompressed little-endian float32 TIFF at argv[2], each sample
    /// scaled to 0…argv[3]; argv[4] and argv[5], if given, replace the Photometric and
    /// SamplesPerPixel tags (to make files whose tags lie about their pixels).
    static let floatTIFFWriter = """
        import struct, sys
        from PIL import Image
        image = Image.open(sys.argv[1]).convert("RGB"); w, h = image.size; scale = float(sys.argv[3])
        photometric, samples = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (2, 3)
        pixels = struct.pack("<%df" % (w * h * 3), *[v / 255 * scale for p in image.getdata() for v in p])
        tags = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, 3, 8 + len(pixels)), (259, 3, 1, 1), (262, 3, 1, photometric), (273, 4, 1, 8),
                (277, 3, 1, samples), (278, 4, 1, h), (279, 4, 1, len(pixels)), (284, 3, 1, 1), (339, 3, 3, 8 + len(pixels) + 6)]
        ifd = 8 + len(pixels) + 12
        out = b"II*\\0" + struct.pack("<I", ifd) + pixels + struct.pack("<3H", 32, 32, 32) + struct.pack("<3H", 3, 3, 3)
        out += struct.pack("<H", len(tags)) + b"".join(struct.pack("<HHII", *t) if t[1] == 4 or t[2] > 1 else struct.pack("<HHIHH", t[0], t[1], t[2], t[3], 0) for t in tags) + struct.pack("<I", 0)
        open(sys.argv[2], "wb").write(out)
        """

    @Test func tiffAlphaPaletteOrientationAndPages() throws {
        let dir = TemporaryDirectory()
        let clear = TestPictures.source(alpha: true)
        let alpha = try FixtureTools.fixture(dir, "alpha.tif", from: clear, "convert") { [$0, "-compress", "lzw", $1] }
        #expect(try Self.expectMatches(alpha, clear).hasAlpha)
        let art = TestPictures.graphic(transparent: false)
        let palette = try FixtureTools.fixture(dir, "palette.tif", from: art, "convert") { [$0, "-alpha", "off", "-type", "Palette", $1] }
        #expect(try Self.expectMatches(palette, art).colorSpace == "Palette")
        let photo = TestPictures.source()
        let turned = try FixtureTools.fixture(dir, "turned.tif", from: photo, "convert") { [$0, "-alpha", "off", "-orient", "RightTop", $1] }
        try FixtureTools.run("exiftool", ["-q", "-overwrite_original", "-Make=TestCam", "-LensModel=Zoom 24-70", "-DateTimeOriginal=2024:05:06 07:08:09", turned])
        let info = try Self.expectMatches(turned, Self.displayed(photo, orientation: 6))
        #expect(info.orientation == .right && info.pixelWidth == 320 && info.pixelHeight == 480)
        #expect(info.exif?.make == "TestCam" && info.exif?.lensModel == "Zoom 24-70" && info.exif?.dateTimeOriginal == "2024:05:06 07:08:09")
        // Two pages: the first is the thumbnail, both are counted.
        let second = try dir.write("second.png", ImageEncoder.png(Self.displayed(photo, orientation: 3)))
        let first = try dir.write("first.png", ImageEncoder.png(photo))
        let pages = dir.appending("pages.tif")
        try FixtureTools.run("convert", [first, second, "-alpha", "off", pages])
        #expect(try Self.expectMatches(pages, photo).frameCount == 2)
    }

    /// A reduced-resolution page large enough for the box is decoded instead of the full image;
    /// a box it is too small for gets the full image. The reduced page is drawn mirrored, so which
    /// one was read shows in the pixels.
    @Test func tiffUsesAReducedResolutionPageWhenLargeEnough() throws {
        let dir = TemporaryDirectory()
        let full = TestPictures.source(width: 2400, height: 1600)
        let small = Self.displayed(TestPictures.source(width: 600, height: 400), orientation: 2)
        let a = try dir.write("full.png", ImageEncoder.png(full)), b = try dir.write("small.png", ImageEncoder.png(small))
        let path = dir.appending("pyramid.tif")
        try FixtureTools.run("convert", [a, b, "-alpha", "off", "-compress", "lzw", path])
        try FixtureTools.run("tiffset", ["-d", "1", "-s", "254", "1", path])  // SubfileType: reduced-resolution image
        let info = try Self.expectMatches(path, TestPictures.source(width: 600, height: 400).mirrored())
        #expect(info.pixelWidth == 2400 && info.frameCount == 1)
        try Self.expectMatches(path, full, options: ThumbnailOptions(maxWidth: 400, maxHeight: 400))
    }

    // MARK: HEIF and AVIF

    @Test func heicAndAVIFPrimaryImagesWithAndWithoutAlpha() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(), clear = TestPictures.source(alpha: true)
        let heic = try FixtureTools.fixture(dir, "photo.heic", from: photo, "heif-enc") { ["-q", "95", "-o", $1, $0] }
        let info = try Self.expectMatches(heic, photo)
        #expect(info.format == .heif && info.pixelWidth == 480 && info.pixelHeight == 320 && info.bitsPerSample == 8)
        let alpha = try FixtureTools.fixture(dir, "alpha.heic", from: clear, "heif-enc") { ["-q", "95", "-o", $1, $0] }
        #expect(try Self.expectMatches(alpha, clear).hasAlpha)
        // heif-enc's AV1 path (libaom) fails on Debian 12; ImageMagick's goes through libheif too.
        let avif = try FixtureTools.fixture(dir, "photo.avif", from: photo, "convert") { [$0, "-alpha", "off", "-quality", "95", $1] }
        #expect(try Self.expectMatches(avif, photo).format == .avif)
        // Large enough for the 2×2 pre-shrink as the planes are converted; 4:2:0 as phones write.
        let large = TestPictures.source(width: 1440, height: 960, alpha: true)
        let shrunk = try FixtureTools.fixture(dir, "large.heic", from: large, "heif-enc") { ["-q", "95", "-p", "chroma=420", "-o", $1, $0] }
        try Self.expectMatches(shrunk, large)
        let largeOpaque = TestPictures.source(width: 1440, height: 960)
        let largeAVIF = try FixtureTools.fixture(dir, "large.avif", from: largeOpaque, "convert") { [$0, "-alpha", "off", "-quality", "95", $1] }
        try Self.expectMatches(largeAVIF, largeOpaque)
        // Plain HEVC and AV1 pictures are decoded directly by libde265 and dav1d, and so is an
        // alpha plane beside them (the colour's rows take it as they are converted), shrunk or not.
        for path in [heic, avif, largeAVIF, alpha, shrunk] {
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            #expect(String(describing: type(of: try ImageDecoders.images.open(fd, name: path).1)) == "DirectHEIFSource", "\(path)")
        }
        // Premultiplied alpha (a `prem` reference) is divided out again, as libheif 1.15 did not.
        let premultiplied = try FixtureTools.fixture(dir, "premultiplied.heic", from: Self.premultiplied(clear), "heif-enc") {
            ["-q", "95", "--premultiplied-alpha", "-o", $1, $0]
        }
        #expect(try Self.expectMatches(premultiplied, clear, minimum: 33).hasAlpha)
        let fd = open(premultiplied, O_RDONLY)
        defer { close(fd) }
        #expect(String(describing: type(of: try ImageDecoders.images.open(fd, name: premultiplied).1)) == "DirectHEIFSource")
    }

    /// `image` with its colour multiplied by its alpha, as a premultiplied encoder takes it.
    static func premultiplied(_ image: RGBAImage) -> RGBAImage {
        var pixels = image.pixels
        for i in stride(from: 0, to: pixels.count, by: 4) {
            let a = UInt16(pixels[i + 3])
            for c in 0..<3 { pixels[i + c] = UInt8((UInt16(pixels[i + c]) * a + 127) / 255) }
        }
        return RGBAImage(width: image.width, height: image.height, pixels: pixels, hasAlpha: true)
    }

    /// HEVC of 10 bits (as cameras write HDR stills) is decoded directly too, its samples in two
    /// bytes, and indexed as 10 bits.
    @Test func heicOfTenBitsIsDecodedDirectly() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source()
        let deep = try FixtureTools.fixture(dir, "photo.png", from: photo, "convert") { [$0, "-depth", "16", "PNG48:" + $1] }
        let heic = try FixtureTools.fixture(dir, "deep.heic", from: photo, "heif-enc") { _, output in ["-q", "95", "-b", "10", "-o", output, deep] }
        let info = try Self.expectMatches(heic, photo)
        #expect(info.format == .heif && info.bitsPerSample == 10)
        let fd = open(heic, O_RDONLY)
        defer { close(fd) }
        #expect(String(describing: type(of: try ImageDecoders.images.open(fd, name: heic).1)) == "DirectHEIFSource")
    }

    /// HEIF's transforms are libheif's to apply; an EXIF orientation in the file (iPhones write
    /// one beside irot) must not turn the image a second time. The EXIF is still indexed.
    @Test func heicEXIFIsReadButItsOrientationIsNotAppliedTwice() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source()
        let path = try FixtureTools.fixture(dir, "tagged.heic", from: photo, "heif-enc") { ["-q", "95", "-o", $1, $0] }
        try FixtureTools.run("exiftool", ["-q", "-overwrite_original", "-Orientation#=6", "-Make=TestCam", "-Model=HX 1", path])
        let info = try Self.expectMatches(path, photo)
        #expect(info.orientation == .up && info.pixelWidth == 480)
        #expect(info.exif?.make == "TestCam" && info.exif?.model == "HX 1")
    }

    /// The embedded thumbnail is decoded when it is at least the output size, the primary image
    /// otherwise; both give the same picture.
    @Test func heicEmbeddedThumbnailServesSmallBoxes() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(width: 1200, height: 800)
        let path = try FixtureTools.fixture(dir, "thumbed.heic", from: photo, "heif-enc") { ["-q", "95", "-t", "320", "-o", $1, $0] }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let (_, source) = try ImageDecoders.images.open(fd, name: path)
        #expect(try source.start(shrink: 1, fast: false, output: (240, 160)) == (320, 212))
        let (_, again) = try ImageDecoders.images.open(fd, name: path)
        #expect(try again.start(shrink: 1, fast: false, output: (480, 320)) == (1200, 800))
        try Self.expectMatches(path, photo)
        try Self.expectMatches(path, photo, options: ThumbnailOptions(maxWidth: 480, maxHeight: 480))
    }

    /// A phone-style HEIC (a grid of HEVC tiles) of `image` by Tools/make-heic-grid.
    static func heicGrid(_ dir: TemporaryDirectory, _ name: String, from image: RGBAImage, tile: Int,
                         rotate: Int? = nil, mirror: Int? = nil) throws -> String {
        let input = try dir.write(name + ".source.png", ImageEncoder.png(image))
        let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/make-heic-grid").path
        var arguments = [tool, input, dir.appending(name), "--tile", String(tile), "--quality", "95"]
        if let rotate { arguments += ["--rotate", String(rotate)] }
        if let mirror { arguments += ["--mirror", String(mirror)] }
        try FixtureTools.run("/usr/bin/python3", arguments)
        return dir.appending(name)
    }

    /// Grids, as phones write HEIC, go through libde265 a tile at a time: tiles overhanging the
    /// picture are cut, and irot/imir turn it as libheif, the reference decoder here, does. The
    /// orientation reported (libheif's path turns the pixels itself and says `.up`) shows which
    /// path decoded.
    @Test func heicGridsDecodeTileByTileAndTurnAsLibheifDoes() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(width: 300, height: 200)
        let plain = try Self.heicGrid(dir, "grid.heic", from: photo, tile: 128)
        let info = try Self.expectMatches(plain, photo)
        #expect(info.format == .heif && info.pixelWidth == 300 && info.pixelHeight == 200 && info.frameCount == 1 && !info.hasAlpha)
        // Large enough for the 2×2 pre-shrink inside each tile.
        let large = TestPictures.source(width: 1100, height: 700)
        let largeGrid = try Self.heicGrid(dir, "large.heic", from: large, tile: 256)
        try Self.expectMatches(largeGrid, large)
        // Tiles decoded side by side (a one-file get's worker) make the same thumbnail as one by one.
        let threaded = WorkerPool(.init(workers: 1, decodeThreads: 3))
        #expect(try threaded.thumbnail(ofFileAt: largeGrid, options: Self.box, format: nil).image
                == Self.pool.thumbnail(ofFileAt: largeGrid, options: Self.box, format: nil).image)
        for (rotate, mirror) in [(1, nil), (3, 0), (nil, 1), (2, 0), (1, 1)] as [(Int?, Int?)] {
            let name = "turned-\(rotate ?? 0)-\(mirror ?? -1).heic"
            let path = try Self.heicGrid(dir, name, from: photo, tile: 128, rotate: rotate, mirror: mirror)
            try FixtureTools.run("heif-convert", [path, dir.appending(name + ".png")])
            let reference = try ImageDecoder.png(Array(Data(contentsOf: URL(fileURLWithPath: dir.appending(name + ".png")))), maxPixels: 1 << 20)
            let turned = try Self.expectMatches(path, reference)
            #expect(turned.orientation != .up && turned.pixelWidth == reference.width && turned.pixelHeight == reference.height, "\(name)")
        }
    }

    // MARK: JPEG XL

    @Test func jpegXLLossyLosslessAlphaAndRecompressedJPEG() throws {
        let dir = TemporaryDirectory()
        let photo = TestPictures.source(), clear = TestPictures.source(alpha: true)
        let lossy = try FixtureTools.fixture(dir, "photo.jxl", from: photo, "cjxl") { [$0, $1, "-d", "0.5", "--quiet"] }
        let info = try Self.expectMatches(lossy, photo)
        #expect(info.format == .jpegXL && info.pixelWidth == 480 && info.bitsPerSample == 8)
        let lossless = try FixtureTools.fixture(dir, "alpha.jxl", from: clear, "cjxl") { [$0, $1, "-d", "0", "--quiet"] }
        #expect(try Self.expectMatches(lossless, clear).hasAlpha)
        // A JPEG recompressed losslessly keeps its EXIF, and its orientation becomes the codestream's.
        let jpeg = try dir.write("turned.jpg", ImageEncoder.jpeg(photo, quality: 95))
        try FixtureTools.run("exiftool", ["-q", "-overwrite_original", "-Orientation#=6", "-Make=TestCam", jpeg])
        let recompressed = dir.appending("turned.jxl")
        try FixtureTools.run("cjxl", [jpeg, recompressed, "--quiet"])
        let turned = try Self.expectMatches(recompressed, Self.displayed(photo, orientation: 6))
        #expect(turned.pixelWidth == 320 && turned.pixelHeight == 480 && turned.exif?.make == "TestCam")
    }
}

extension RGBAImage {
    /// Mirrored left to right.
    func mirrored() -> RGBAImage { (Orientation(rawValue: 2) ?? .up).apply(to: self) }
}
