import Foundation
import Testing
@testable import ThumbcacheImaging
import ThumbcacheTestSupport

/// The PNG writer (chunks by hand, ISA-L's deflate): what libpng reads back, and Python's zlib.
struct PNGEncoderTests {
    /// Pixels that neither compress to nothing nor repeat by row: a gradient with noise.
    static func image(width: Int, height: Int, alpha: Bool, seed: UInt64 = 7) -> RGBAImage {
        var state = seed
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let noise = UInt8(truncatingIfNeeded: state >> 59)
                let i = (y * width + x) * 4
                pixels[i] = UInt8(truncatingIfNeeded: x &* 255 / max(1, width - 1)) &+ noise
                pixels[i + 1] = UInt8(truncatingIfNeeded: y &* 255 / max(1, height - 1))
                pixels[i + 2] = UInt8(truncatingIfNeeded: (x ^ y) & 0xff)
                pixels[i + 3] = alpha ? UInt8(truncatingIfNeeded: (x &+ y) & 0xff) : 255
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels, hasAlpha: alpha)
    }

    struct Shape: Sendable, CustomTestStringConvertible {
        var width: Int
        var height: Int
        var alpha: Bool
        var testDescription: String { "\(width)×\(height)\(alpha ? " RGBA" : " RGB")" }
    }

    /// One pixel, a tall strip, an odd width, one whose output outgrows the first buffer many
    /// times over, and rows wider than a block of filtered rows (each deflated alone).
    @Test(arguments: [Shape(width: 1, height: 1, alpha: false), Shape(width: 3, height: 5000, alpha: true),
                      Shape(width: 257, height: 3, alpha: false), Shape(width: 1500, height: 1100, alpha: true),
                      Shape(width: 1500, height: 1100, alpha: false), Shape(width: 40000, height: 3, alpha: true),
                      Shape(width: 45000, height: 2, alpha: false)])
    func everyShapeReadsBackAsItsPixels(_ shape: Shape) throws {
        let source = Self.image(width: shape.width, height: shape.height, alpha: shape.alpha)
        let png = try ImageEncoder.png(source)
        // Every chunk's CRC, IDAT's too, and nothing after IEND.
        _ = try PNGChunks.extracting("tEXt", from: png)
        let back = try ImageDecoder.png(png, maxPixels: 4 << 20)
        #expect(back.width == shape.width && back.height == shape.height)
        #expect(back.pixels == source.pixels)
        #expect(png[25] == (shape.alpha ? 6 : 2), "the colour type")
    }

    @Test func textAndEXIFChunksComeBeforeTheImageData() throws {
        let exif: [UInt8] = Array("MM\0*".utf8) + [0, 0, 0, 8, 0, 0]
        let png = try ImageEncoder.png(Self.image(width: 40, height: 30, alpha: false), exif: exif,
                                       text: [("Thumb::URI", "file:///tmp/a%20b.png"), ("Thumb::MTime", "1700000000")])
        #expect(PNGText.parse(png) == ["Thumb::URI": "file:///tmp/a%20b.png", "Thumb::MTime": "1700000000"])
        let (_, exifChunks) = try PNGChunks.extracting("eXIf", from: png)
        #expect(exifChunks == [exif])
        let order = Self.chunkTypes(png)
        #expect(order == ["IHDR", "eXIf", "tEXt", "tEXt", "IDAT", "IEND"])
    }

    /// A reader that is not libpng: Python's zlib inflates the IDAT stream to the filtered rows.
    @Test func pythonsZlibInflatesTheImageData() throws {
        let dir = TemporaryDirectory()
        let source = Self.image(width: 64, height: 48, alpha: false)
        let path = try dir.write("a.png", ImageEncoder.png(source))
        let script = """
            import struct, sys, zlib
            data = open(sys.argv[1], 'rb').read()
            at, idat = 8, b''
            while at < len(data):
                n, = struct.unpack('>I', data[at:at + 4])
                if data[at + 4:at + 8] == b'IDAT': idat += data[at + 8:at + 8 + n]
                at += 12 + n
            rows = zlib.decompress(idat)
            print(len(rows), sorted(set(rows[i * (64 * 3 + 1)] for i in range(48))))
            """
        let output = try FixtureTools.run("/usr/bin/python3", ["-c", script, path])
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(48 * (64 * 3 + 1)) [0, 2]")
    }

    static func chunkTypes(_ png: [UInt8]) -> [String] {
        var types: [String] = []
        var offset = 8
        while offset + 12 <= png.count {
            let length = Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
            types.append(String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self))
            offset += 12 + length
        }
        return types
    }
}
