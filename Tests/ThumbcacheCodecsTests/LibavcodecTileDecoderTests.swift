import Foundation
import Testing
@testable import ThumbcacheCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport

/// FFmpeg's HEVC decoder stands in for libde265 where it loads: the same planes, byte for byte,
/// with the in-loop filters and without them; damage is an error, not a concealed picture.
@Suite struct LibavcodecTileDecoderTests {
    /// `body` given a HEIC's one coded picture: its record, its coded bytes and its item.
    func withPicture(bits: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, HEIFContainer.ItemID) throws -> Void) throws {
        let dir = TemporaryDirectory()
        try HEIFStreamingTests.withOnePicture(try HEIFStreamingTests.textured(dir, bits: bits, width: 330, height: 250), body)
    }

    /// Every plane's visible samples, row by row.
    func samples(_ tile: DecodedTile) -> [[UInt8]] {
        tile.planes.enumerated().map { c, plane in
            let (sx, sy) = switch tile.model {
            case .ycbcr(let x, let y) where c > 0: (x, y)
            default: (1, 1)
            }
            let width = (tile.width + sx - 1) / sx * (tile.bits > 8 ? 2 : 1), height = (tile.height + sy - 1) / sy
            return (0..<height).flatMap { y in Array(UnsafeBufferPointer(start: plane.0 + y * plane.1, count: width)) }
        }
    }

    @Test(arguments: [(8, true), (8, false), (10, true), (10, false)])
    func itDecodesLibde265sPixels(bits: Int, fast: Bool) throws {
        try withPicture(bits: bits) { config, coded, item in
            let ours = try #require(LibavcodecTileDecoder(path: "t.heic", fast: fast), "libavcodec did not load")
            let reference = try HEVCTileDecoder(path: "t.heic", fast: fast)
            let a = try ours.decode(config: config, data: coded, tile: item, declared: (330, 250), copied: {})
            let b = try reference.decode(config: config, data: coded, tile: item, declared: (330, 250), copied: {})
            #expect(a.width == 330 && a.height == 250 && a.bits == bits)
            #expect(a.width == b.width && a.height == b.height && a.bits == b.bits && a.model == b.model)
            #expect(samples(a) == samples(b))
            // A second tile through the same decoder: nothing of the first is kept.
            let again = try ours.decode(config: config, data: coded, tile: item, declared: (330, 250), copied: {})
            #expect(samples(again) == samples(b))
        }
    }

    @Test func damageIsAnErrorNotAConcealedPicture() throws {
        try withPicture(bits: 8) { config, coded, item in
            let decoder = try #require(LibavcodecTileDecoder(path: "t.heic", fast: true))
            // The coded bytes cut short: the length prefix of its last unit now runs past the end.
            #expect(throws: ImagingError.self) {
                try decoder.decode(config: config, data: UnsafeRawBufferPointer(rebasing: coded.prefix(coded.count / 2)), tile: item,
                                   declared: (330, 250), copied: {})
            }
            // Damage within the slice data (CABAC data has little redundancy: neither library notices
            // all of it): an error naming the tile where libavcodec detects it, else a picture of the
            // declared size; nothing crashes.
            for step in [3, 7, 50] {
                var damaged = Array(coded)
                for i in stride(from: damaged.count / 2, to: damaged.count, by: step) { damaged[i] = 0xFF }
                do {
                    let picture = try damaged.withUnsafeBytes { try decoder.decode(config: config, data: $0, tile: item, declared: (330, 250), copied: {}) }
                    #expect(picture.width == 330 && picture.height == 250)
                } catch {
                    #expect("\(error)".contains("tile \(item)"), "\(error)")
                }
            }
            // Damage it does detect is an error, not a concealed picture: the slice no longer says it
            // is its picture's first (a 2-byte NAL header, then that flag in the top bit).
            var at = 0, slice: Int?
            while slice == nil, at + 6 <= coded.count {
                let length = Int(coded[at]) << 24 | Int(coded[at + 1]) << 16 | Int(coded[at + 2]) << 8 | Int(coded[at + 3])
                if coded[at + 4] >> 1 & 0x3F < 32 { slice = at + 6 }
                at += 4 + length
            }
            var headless = Array(coded)
            headless[try #require(slice)] &= 0x7F
            #expect(throws: ImagingError.self) {
                try headless.withUnsafeBytes { try decoder.decode(config: config, data: $0, tile: item, declared: (330, 250), copied: {}) }
            }
            // A picture larger than the item declares is refused before it is decoded.
            #expect(throws: ImagingError.self) {
                try decoder.decode(config: config, data: coded, tile: item, declared: (128, 128), copied: {})
            }
            // And the decoder still decodes a sound tile after all that.
            let sound = try decoder.decode(config: config, data: coded, tile: item, declared: (330, 250), copied: {})
            #expect(sound.width == 330)
        }
    }
}
