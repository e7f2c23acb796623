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
            // Damage within the slice data, where libde265 goes on: whatever libavcodec detects is an
            // error, else a picture of the declared size; neither crashes.
            for step in [3, 7, 50] {
                var damaged = Array(coded)
                for i in stride(from: damaged.count / 2, to: damaged.count, by: step) { damaged[i] = 0xFF }
                do {
                    let picture = try damaged.withUnsafeBytes { try decoder.decode(config: config, data: $0, tile: item, declared: (330, 250), copied: {}) }
                    #expect(picture.width == 330 && picture.height == 250)
                } catch {
                    #expect("\(error)".contains("libavcodec"), "\(error)")
                }
            }
            // The last unit's slice data ended at its half, its length saying so: libavcodec finds the
            // data missing (libde265 made up the rest of the picture).
            var lengths: [Int] = [], at = 0
            while at + 4 <= coded.count {
                let length = Int(coded[at]) << 24 | Int(coded[at + 1]) << 16 | Int(coded[at + 2]) << 8 | Int(coded[at + 3])
                lengths.append(at)
                at += 4 + length
            }
            let last = try #require(lengths.last)
            let half = (coded.count - last - 4) / 2
            var cut = Array(coded[..<(last + 4 + half)])
            cut[last] = UInt8(half >> 24 & 0xFF); cut[last + 1] = UInt8(half >> 16 & 0xFF); cut[last + 2] = UInt8(half >> 8 & 0xFF); cut[last + 3] = UInt8(half & 0xFF)
            #expect(throws: ImagingError.self) {
                try cut.withUnsafeBytes { try decoder.decode(config: config, data: $0, tile: item, declared: (330, 250), copied: {}) }
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
