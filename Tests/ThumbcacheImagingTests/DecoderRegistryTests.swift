import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

/// A format is one registration and one ``RowSource``: this test format ("TCGRAY" at offset 4,
/// then width, height and 8-bit grey samples) goes through the same planning, shrink and
/// orientation code as PNG and JPEG.
final class GraySource: RowSource {
    let width: Int, height: Int, samples: [UInt8]
    private(set) var startedWith: Int?

    init(descriptor: Int32, name: String) throws(ImagingError) {
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard n >= 14 else { throw ImagingError(path: name, reason: .corrupt("short header")) }
        width = Int(bytes[10]) << 8 | Int(bytes[11])
        height = Int(bytes[12]) << 8 | Int(bytes[13])
        guard n - 14 >= width * height else { throw ImagingError(path: name, reason: .corrupt("\(n - 14) samples for \(width)×\(height)")) }
        samples = Array(bytes[14..<(14 + width * height)])
    }

    var header: RowSourceHeader { RowSourceHeader(width: width, height: height, hasAlpha: false, maxShrink: 2) }

    /// Shrinks on load by dropping every other row and column, as a real decoder's DCT scaling would.
    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        startedWith = shrink
        return ((width + shrink - 1) / shrink, (height + shrink - 1) / shrink)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let shrink = startedWith ?? 1
        var row = [UInt8](repeating: 255, count: (width + shrink - 1) / shrink * 4)
        for y in stride(from: 0, to: height, by: shrink) {
            for (i, x) in stride(from: 0, to: width, by: shrink).enumerated() {
                row[i * 4] = samples[y * width + x]; row[i * 4 + 1] = samples[y * width + x]; row[i * 4 + 2] = samples[y * width + x]
            }
            row.withUnsafeBufferPointer { sink($0.baseAddress!) }
        }
    }

    static let format = ImageFormat(rawValue: "test-gray")
    static let registration = ImageDecoderRegistration(
        format: format, typeIdentifier: "org.example.gray", magic: [Magic("TCGRAY", at: 4)]
    ) { (fd, name) throws(ImagingError) in try GraySource(descriptor: fd, name: name) }

    static func file(width: Int, height: Int, level: (Int, Int) -> UInt8) -> [UInt8] {
        var out: [UInt8] = [0, 0, 0, 14] + Array("TCGRAY".utf8) + [UInt8(width >> 8), UInt8(width & 255), UInt8(height >> 8), UInt8(height & 255)]
        for y in 0..<height { for x in 0..<width { out.append(level(x, y)) } }
        return out
    }
}

struct DecoderRegistryTests {
    @Test func magicIsMatchedAtItsOffset() {
        let heic: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0]
        let moved: [UInt8] = Array("ftypheic".utf8) + [0, 0, 0, 0]
        let magic = Magic("ftyp", at: 4).and("heic", at: 8)
        #expect(magic.matches(heic))
        #expect(!magic.matches(moved))
        #expect(!magic.matches(Array(heic.prefix(11))))  // too short to decide: no match
        #expect(magic.span == 12 && magic.weight == 8)
    }

    @Test func aRegisteredFormatIsDetectedAndDecodedThroughTheCommonPath() throws {
        var decoders = ImageDecoders.standard
        decoders.register(GraySource.registration)
        let dir = TemporaryDirectory()
        let path = try dir.write("ramp.gray", GraySource.file(width: 200, height: 100) { x, _ in UInt8(x) })
        #expect(throws: ImagingError.self) { try ImageFormat.detect(fileAt: path) }  // not a standard format
        #expect(throws: ImagingError.self) { try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 50, maxHeight: 50)) }

        let (image, info) = try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 50, maxHeight: 50), decoders: decoders)
        #expect(info.format == GraySource.format)
        #expect(info.pixelWidth == 200 && info.pixelHeight == 100)
        #expect(image.width == 50 && image.height == 25)
        // A left-to-right ramp survives the shrink-on-load and the filter: dark left, light right.
        #expect(image.pixels[0] < 20 && image.pixels[(49) * 4] > 180)
        #expect(decoders.format(ofType: "org.example.gray") == GraySource.format)
    }

    @Test func theShrinkOnLoadStaysWithinWhatTheDecoderOffers() throws {
        #expect(Thumbnailer.shrinkFactor(width: 4000, height: 3000, outputWidth: 256, outputHeight: 192, maxShrink: 1) == 1)
        #expect(Thumbnailer.shrinkFactor(width: 4000, height: 3000, outputWidth: 256, outputHeight: 192, maxShrink: 2) == 2)
        #expect(Thumbnailer.shrinkFactor(width: 4000, height: 3000, outputWidth: 256, outputHeight: 192) == 4)
    }

    @Test func decodingFromADescriptorReadsFromTheStart() throws {
        let dir = TemporaryDirectory()
        var canvas = [UInt8](repeating: 255, count: 40 * 30 * 4)
        for i in stride(from: 0, to: canvas.count, by: 4) { canvas[i + 1] = 0 }
        let path = try dir.write("m.png", ImageEncoder.png(RGBAImage(width: 40, height: 30, pixels: canvas, hasAlpha: false)))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        lseek(fd, 17, SEEK_SET)  // a descriptor handed over mid-file still decodes from byte 0
        let (image, info) = try Thumbnailer.thumbnail(ofDescriptor: fd, name: path, options: .init(maxWidth: 20, maxHeight: 20))
        #expect(info.format == .png && image.width == 20 && image.height == 15)
        #expect(image.pixels[0] == 255 && image.pixels[1] == 0)
    }
}
