import CThumbcacheQOI
import Testing
import ThumbcacheCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport

/// QOI, the format added by the steps in Docs/ARCHITECTURE.md ("Adding a format"): fixtures
/// encoded by the same reference library, decoded through the image family's registry.
struct QOITests {
    /// A gradient with an off-centre disc and, if asked, alpha falling from opaque to clear.
    static func picture(width: Int, height: Int, alpha: Bool) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let inDisc = (x - width / 3) * (x - width / 3) + (y - height / 3) * (y - height / 3) < (height / 4) * (height / 4)
                pixels[i] = UInt8(x * 255 / max(1, width - 1))
                pixels[i + 1] = inDisc ? 240 : UInt8(y * 255 / max(1, height - 1))
                pixels[i + 2] = UInt8((x + y) % 256)
                pixels[i + 3] = alpha ? UInt8(255 - (x + y) * 255 / max(1, width + height - 2)) : 255
            }
        }
        return pixels
    }

    static func encode(_ pixels: [UInt8], width: Int, height: Int, channels: Int32) throws -> [UInt8] {
        var length = 0
        let encoded = try #require(tcqoi_encode_rgba(pixels, UInt32(width), UInt32(height), channels, &length))
        defer { tcqoi_free(encoded) }
        return Array(UnsafeBufferPointer(start: encoded, count: length))
    }

    /// Every row the decoder hands on, at full size.
    static func decode(_ path: String) throws -> (RowSourceHeader, [UInt8], ImageFormat) {
        let file = try ImageFile(path: path)
        let (format, source) = try ImageDecoders.images.open(file.descriptor, name: path)
        let (width, _) = try source.start(shrink: 1, fast: false)
        var rows: [UInt8] = []
        try source.readRows { rows.append(contentsOf: UnsafeBufferPointer(start: $0, count: width * 4)) }
        return (source.header, rows, format)
    }

    @Test(arguments: [(Int32(4), true), (Int32(3), false)])
    func decodesWhatTheReferenceEncoderWrote(channels: Int32, alpha: Bool) throws {
        let dir = TemporaryDirectory()
        let pixels = Self.picture(width: 97, height: 61, alpha: alpha)
        let path = try dir.write("picture.qoi", Self.encode(pixels, width: 97, height: 61, channels: channels))
        let (header, rows, format) = try Self.decode(path)
        #expect(format == .qoi)
        #expect(header.width == 97 && header.height == 61 && header.hasAlpha == alpha && header.buffered)
        #expect(rows == pixels)  // lossless: every byte back
    }

    @Test func aFileCutShortOrWithABadHeaderIsAnErrorNamingIt() throws {
        let dir = TemporaryDirectory()
        let whole = try Self.encode(Self.picture(width: 40, height: 30, alpha: false), width: 40, height: 30, channels: 4)
        let cut = try dir.write("cut.qoi", Array(whole.prefix(whole.count / 2)))
        #expect { try Self.decode(cut) } throws: { error in
            let error = error as? ImagingError
            return error?.path == cut && "\(error!)".contains("truncated QOI file")
        }
        var bad = whole
        bad[12] = 7  // seven channels
        let badPath = try dir.write("bad.qoi", bad)
        #expect { try Self.decode(badPath) } throws: { error in "\(error)".contains("not a valid QOI header") }
        let empty = try dir.write("empty.qoi", [])
        #expect(throws: ImagingError.self) { try Self.decode(empty) }
    }
}
