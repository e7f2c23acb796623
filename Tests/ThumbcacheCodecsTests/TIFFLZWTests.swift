import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import ThumbcacheCodecs

/// TIFF's LZW strips decoded by ``TIFFLZW``: the stored pixels exactly, for every layout it takes
/// (RGB, gray, alpha of both kinds, the predictor, strips of one row to ones long enough to clear the
/// table several times, odd widths), and damaged strips never give other pixels than libtiff's.
struct TIFFLZWTests {
    /// The rows of `path`'s first image at full size, and whether TIFFLZW decoded them.
    static func rows(_ path: String, lzw: Bool = true) throws -> (pixels: [UInt8], fast: Bool) {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let source = try TIFFSource(descriptor: fd, name: path, decodesLZW: lzw)
        let (width, _) = try source.start(shrink: 1, fast: false)
        var pixels: [UInt8] = []
        try source.readRows { pixels.append(contentsOf: UnsafeBufferPointer(start: $0, count: width * 4)) }
        return (pixels, source.decodedByTIFFLZW)
    }

    @Test(arguments: [
        ("rgb", ["-alpha", "off", "-define", "tiff:rows-per-strip=64"]),
        ("rgb-predictor", ["-alpha", "off", "-define", "tiff:predictor=2", "-define", "tiff:rows-per-strip=64"]),
        ("rgb-one-row-strips", ["-alpha", "off", "-define", "tiff:predictor=2", "-define", "tiff:rows-per-strip=1"]),
        ("rgba-unassociated", ["-define", "tiff:alpha=unassociated", "-define", "tiff:predictor=2"]),
        ("gray", ["-alpha", "off", "-colorspace", "Gray"]),
        ("gray-predictor-alpha", ["-colorspace", "Gray", "-define", "tiff:alpha=unassociated", "-define", "tiff:predictor=2"]),
    ])
    func stripsAreTheStoredPixels(name: String, options: [String]) throws {
        let dir = TemporaryDirectory()
        let alpha = name.contains("alpha")
        // An odd width and a last strip shorter than the others.
        var picture = TestPictures.source(width: 197, height: 131, alpha: alpha)
        if name.hasPrefix("gray") { picture = TestPictures.grayed(picture) }
        let path = try FixtureTools.fixture(dir, name + ".tif", from: picture, "convert") { [$0] + options + ["-compress", "lzw", $1] }
        let (pixels, fast) = try Self.rows(path)
        #expect(fast, "\(name): not decoded by TIFFLZW")
        #expect(pixels == picture.pixels, "\(name): not the stored pixels")
        // libtiff's reading agrees where it keeps alpha straight (no alpha, or none to undo).
        if !alpha {
            let reference = try Self.rows(path, lzw: false)
            #expect(!reference.fast && reference.pixels == pixels)
        }
    }

    /// Premultiplied (associated) alpha comes out straight, as libtiff's RGBA rows are made
    /// straight; a strip of noise fills and clears the table many times.
    @Test func associatedAlphaAndNoiseMatchLibtiff() throws {
        let dir = TemporaryDirectory()
        var noise = TestPictures.source(width: 301, height: 203, alpha: true)
        var seed: UInt32 = 99
        for i in noise.pixels.indices where i % 4 != 3 || i % 36 == 3 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            noise.pixels[i] = UInt8(truncatingIfNeeded: seed >> 24)
        }
        let path = try FixtureTools.fixture(dir, "noise.tif", from: noise, "convert") {
            [$0, "-define", "tiff:alpha=associated", "-define", "tiff:rows-per-strip=203", "-compress", "lzw", $1]
        }
        let (pixels, fast) = try Self.rows(path)
        let reference = try Self.rows(path, lzw: false)
        #expect(fast && !reference.fast)
        #expect(pixels == reference.pixels)
    }

    /// A TIFF the path does not take keeps libtiff's own reason for refusing it: asking whether
    /// it is one leaves no message behind (libtiff reports asking a codec without a predictor for one).
    @Test func otherTIFFsKeepTheirOwnErrors() throws {
        let dir = TemporaryDirectory()
        // A two-colour palette with alpha, 1 bit a sample, PackBits: the RGBA interface refuses it.
        let (red, path) = (dir.appending("red.png"), dir.appending("palette-alpha.tif"))
        try FixtureTools.run("convert", ["-size", "30x20", "xc:red", "-depth", "8", red])
        try FixtureTools.run("convert", [red, "-alpha", "set", "-define", "tiff:alpha=unassociated", "-compress", "rle", path])
        do {
            _ = try Self.rows(path)
            Issue.record("a 1-bit palette with alpha decoded")
        } catch let error as ImagingError {
            #expect("\(error)".contains("PhotometricInterpretation") && !"\(error)".contains("Predictor"), "\(error)")
        }
    }

    /// A damaged strip of another compression fails too, with libtiff's reason, rather than
    /// giving the pixels libtiff had when it gave up.
    @Test func damagedStripsOfOtherCompressionsFail() throws {
        let dir = TemporaryDirectory()
        let path = try FixtureTools.fixture(dir, "deflate.tif", from: TestPictures.source(width: 160, height: 120), "convert") {
            [$0, "-alpha", "off", "-define", "tiff:rows-per-strip=16", "-compress", "zip", $1]
        }
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        // ImageMagick writes the strips after the 8-byte header, the directory last.
        for i in stride(from: bytes.count / 4, to: bytes.count / 2, by: 7) { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
        let damaged = try dir.write("damaged.tif", bytes)
        #expect(throws: ImagingError.self) { _ = try Self.rows(damaged) }
        #expect(try Self.rows(path).pixels.count == 160 * 120 * 4)
    }

    /// Bytes of the strips changed at random: TIFFLZW fails naming the strip, or gives the
    /// pixels libtiff gives; it never reads or writes outside its buffers (the process lives).
    @Test func damagedStripsFailOrMatchLibtiff() throws {
        let dir = TemporaryDirectory()
        let picture = TestPictures.source(width: 160, height: 120)
        let path = try FixtureTools.fixture(dir, "seed.tif", from: picture, "convert") {
            [$0, "-alpha", "off", "-define", "tiff:predictor=2", "-define", "tiff:rows-per-strip=16", "-compress", "lzw", $1]
        }
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        var seed: UInt32 = 7
        func random(_ n: Int) -> Int {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return Int(seed >> 8) % n
        }
        var failed = 0, matched = 0
        for round in 0..<150 {
            var damaged = bytes
            // ImageMagick writes the strips right after the 8-byte header, the directory last.
            for _ in 0...random(4) { damaged[8 + random(bytes.count / 2)] = UInt8(truncatingIfNeeded: random(256)) }
            let file = try dir.write("damaged-\(round).tif", damaged)
            do {
                let (pixels, _) = try Self.rows(file)
                let reference = try Self.rows(file, lzw: false)
                #expect(pixels == reference.pixels, "round \(round): other pixels than libtiff's")
                matched += 1
            } catch let error as ImagingError {
                #expect(error.path == file)
                failed += 1
            }
        }
        #expect(failed > 50, "most damage is found: \(failed) failed, \(matched) decoded")
    }
}
