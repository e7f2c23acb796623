import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

/// Rows downscaled on a second thread (a decode allowed two threads) give the pixels of the
/// one-thread path, and a file cut short fails the same way, with nothing left running.
struct PipelinedRowsTests {
    static func decoders(threads: Int) -> ImageDecoders {
        var decoders = ImageDecoders.standard
        decoders.settings = DecodeSettings(threads: threads)
        return decoders
    }

    @Test(arguments: ["jpeg", "png", "png-alpha"])
    func twoThreadsGiveTheOneThreadPixels(_ kind: String) throws {
        let dir = TemporaryDirectory()
        // Tall enough for many bands, with a last band cut short (1237 rows: 77 bands and 5 rows).
        var picture = TestPictures.source(width: 1601, height: 1237)
        if kind == "png-alpha" {
            for i in stride(from: 3, to: picture.pixels.count, by: 4) { picture.pixels[i] = UInt8(truncatingIfNeeded: i / 4 % 251) }
            picture.hasAlpha = true
        }
        let bytes = kind == "jpeg" ? try ImageEncoder.jpeg(picture, quality: 90) : try ImageEncoder.png(picture)
        let path = try dir.write("picture.\(kind)", bytes)
        for box in [(256, 256), (97, 300)] {
            let options = ThumbnailOptions(maxWidth: box.0, maxHeight: box.1)
            let one = try Thumbnailer.thumbnail(ofFileAt: path, options: options, decoders: Self.decoders(threads: 1)).image
            let two = try Thumbnailer.thumbnail(ofFileAt: path, options: options, decoders: Self.decoders(threads: 2)).image
            #expect(two == one)
            #expect(two.width <= box.0 && two.height <= box.1 && two.width > 0)
        }
    }

    @Test func aTruncatedFileFailsAsOnOneThread() throws {
        let dir = TemporaryDirectory()
        let bytes = try ImageEncoder.png(TestPictures.source(width: 1200, height: 900))
        let path = try dir.write("cut.png", Array(bytes.prefix(bytes.count / 2)))
        let options = ThumbnailOptions(maxWidth: 128, maxHeight: 128)
        let one = #expect(throws: ImagingError.self) { try Thumbnailer.thumbnail(ofFileAt: path, options: options, decoders: Self.decoders(threads: 1)) }
        let two = #expect(throws: ImagingError.self) { try Thumbnailer.thumbnail(ofFileAt: path, options: options, decoders: Self.decoders(threads: 2)) }
        #expect(two?.description == one?.description)
        #expect(two?.description.contains("cut.png") == true)
    }
}
