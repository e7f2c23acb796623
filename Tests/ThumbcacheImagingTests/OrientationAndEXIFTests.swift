import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

struct OrientationAndEXIFTests {
    /// Stores an upright image as orientation `o` would (the inverse turn), tags it with `o`,
    /// and expects the upright thumbnail back: all eight give the same displayed image.
    @Test(arguments: Orientation.allCases.map(\.rawValue))
    func everyOrientationDisplaysTheSame(_ raw: Int) throws {
        let o = Orientation(rawValue: raw)!
        let upright = photoLikeImage(width: 40, height: 24)
        let stored = inverse(of: o).apply(to: upright)
        let exif = EXIFBuilder(ifd0: [(0x0112, .short(UInt16(raw)))]).build()
        let dir = TemporaryDirectory()
        let path = try dir.write("o\(raw).png", PNGWriter.make(width: stored.width, height: stored.height, colorType: 6, depth: 8, exif: exif) { x, y in
            let i = (y * stored.width + x) * 4
            return stored.pixels[i..<i + 4].map(Int.init)
        })
        let (thumb, info) = try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 20, maxHeight: 20))
        #expect(info.orientation == o)
        #expect(info.pixelWidth == 40 && info.pixelHeight == 24)
        let expected = try Thumbnailer.thumbnail(
            ofFileAt: try dir.write("up.png", ImageEncoder.png(upright)), options: .init(maxWidth: 20, maxHeight: 20)
        ).image
        #expect(thumb.width == expected.width && thumb.height == expected.height)
        #expect(psnr(thumb, expected) > 45, "orientation \(raw)")
    }

    @Test(arguments: Orientation.allCases.map(\.rawValue))
    func jpegOrientationIsApplied(_ raw: Int) throws {
        let o = Orientation(rawValue: raw)!
        let upright = photoLikeImage(width: 64, height: 32)
        let stored = inverse(of: o).apply(to: upright)
        let exif = EXIFBuilder(ifd0: [(0x0112, .short(UInt16(raw)))]).build()
        let dir = TemporaryDirectory()
        let path = try dir.write("o.jpg", ImageEncoder.jpeg(stored, quality: 95, exif: exif))
        let (thumb, _) = try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 32, maxHeight: 32))
        #expect(thumb.width == 32 && thumb.height == 16)
        #expect(psnr(thumb, referenceResize(upright, width: 32, height: 16)) > 30, "orientation \(raw)")
    }

    func inverse(of o: Orientation) -> Orientation {
        switch o {
        case .right: .left
        case .left: .right
        default: o  // the others are their own inverse
        }
    }

    @Test func fieldsForTheIndexAreRead() throws {
        var b = EXIFBuilder()
        b.ifd0 = [
            (0x010F, .ascii("Canon")), (0x0110, .ascii("EOS 5D Mark IV")), (0x013B, .ascii("Ada")),
            (0x010E, .ascii("Harbour at dusk")), (0x0112, .short(6)),
            (0x8769, .ifd([
                (0x9003, .ascii("2024:07:14 19:32:05")), (0x9011, .ascii("+02:00")), (0x829A, .rationals([(1, 250)])),
                (0x829D, .rationals([(28, 10)])), (0x8827, .short(400)), (0x920A, .rationals([(50, 1)])),
                (0xA002, .long(6720)), (0xA003, .long(4480)),
            ])),
            (0x8825, .ifd([
                (0x0001, .ascii("S")), (0x0002, .rationals([(33, 1), (51, 1), (3600, 100)])),
                (0x0003, .ascii("E")), (0x0004, .rationals([(151, 1), (12, 1), (0, 1)])),
                (0x0005, .short(0)), (0x0006, .rationals([(125, 10)])),
            ])),
        ]
        let e = try #require(b.build().withUnsafeBytes { EXIFData.parse($0) })
        #expect(e.make == "Canon" && e.model == "EOS 5D Mark IV" && e.artist == "Ada")
        #expect(e.imageDescription == "Harbour at dusk")
        #expect(e.orientation == 6)
        #expect(e.dateTimeOriginal == "2024:07:14 19:32:05" && e.offsetTimeOriginal == "+02:00")
        #expect(e.exposureTime == 0.004 && e.fNumber == 2.8 && e.isoSpeed == 400 && e.focalLength == 50)
        #expect(e.pixelWidth == 6720 && e.pixelHeight == 4480)
        #expect(abs(e.latitude! - -33.86) < 1e-9)
        #expect(abs(e.longitude! - 151.2) < 1e-9)
        #expect(e.altitude == 12.5)
    }

    @Test func malformedEXIFIsSurvived() {
        // A next-IFD pointer to itself, an entry count past the end, offsets past the end, huge counts.
        var loop: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0]
        loop += [0x12, 0x01, 3, 0, 1, 0, 0, 0, 3, 0, 0, 0]  // orientation 3
        loop += [8, 0, 0, 0]  // next IFD: itself
        #expect(loop.withUnsafeBytes { EXIFData.parse($0) }?.orientation == 3)

        var hugeCount: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0xFF, 0xFF]
        hugeCount += [0x01, 0x0F, 0, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 8]  // Make: 4 G characters
        #expect(hugeCount.withUnsafeBytes { EXIFData.parse($0) }?.make == nil)

        var badOffset: [UInt8] = [0x49, 0x49, 42, 0, 0xF0, 0xFF, 0xFF, 0x7F]
        #expect(badOffset.withUnsafeBytes { EXIFData.parse($0) } != nil)
        badOffset = [0x49, 0x49, 41, 0]
        #expect(badOffset.withUnsafeBytes { EXIFData.parse($0) } == nil)

        // Random bytes after a valid header never crash.
        var generator = SeededRandom.forTest()
        for _ in 0..<500 {
            var junk: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
            junk += (0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = junk.withUnsafeBytes { EXIFData.parse($0) }
        }
    }

    @Test func embeddedThumbnailIsExtractedAndTurned() throws {
        let small = photoLikeImage(width: 32, height: 16)
        var b = EXIFBuilder(ifd0: [(0x0112, .short(6))])
        b.thumbnail = try ImageEncoder.jpeg(small, quality: 90)
        let dir = TemporaryDirectory()
        let path = try dir.write("camera.jpg", ImageEncoder.jpeg(photoLikeImage(width: 320, height: 160), exif: b.build()))
        let thumb = try #require(try Thumbnailer.embeddedThumbnail(ofFileAt: path))
        #expect(thumb.width == 16 && thumb.height == 32)  // orientation 6 turns it upright
        #expect(psnr(thumb, Orientation.right.apply(to: small)) > 30)
        let plain = try dir.write("plain.jpg", ImageEncoder.jpeg(small))
        #expect(try Thumbnailer.embeddedThumbnail(ofFileAt: plain) == nil)
    }
}
