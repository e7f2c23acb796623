import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

/// Bad input: every case is a typed error naming the file and the reason; nothing crashes.
struct HostileInputTests {
    func thumbnail(_ bytes: [UInt8], name: String) throws(ImagingError) -> RGBAImage {
        let dir = TemporaryDirectory()
        let path = try! dir.write(name, bytes)
        return try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 64, maxHeight: 64)).image
    }

    func reason(_ bytes: [UInt8], name: String = "bad") -> ImagingError.Reason? {
        do {
            _ = try thumbnail(bytes, name: name)
            return nil
        } catch {
            #expect(error.path.hasSuffix(name))
            #expect(error.description.hasPrefix(error.path + ": "))
            return error.reason
        }
    }

    @Test func zeroByteFile() { #expect(reason([]) == .empty) }

    @Test func notAnImage() { #expect(reason(Array("just some text".utf8)) == .unsupportedFormat) }

    @Test func truncatedPNG() throws {
        let png = try ImageEncoder.png(photoLikeImage(width: 200, height: 200))
        for cut in [20, 60, png.count / 2, png.count - 20] {
            guard case .corrupt? = reason(Array(png.prefix(cut)), name: "cut\(cut).png") else {
                Issue.record("truncated at \(cut) was not reported as corrupt")
                continue
            }
        }
    }

    @Test(arguments: [false, true])
    func truncatedJPEGIsAnErrorNotGreyFill(progressive: Bool) throws {
        let jpeg = try ImageEncoder.jpeg(photoLikeImage(width: 400, height: 300), progressive: progressive)
        for cut in [jpeg.count / 3, jpeg.count / 2, jpeg.count - 10] {
            guard case .corrupt? = reason(Array(jpeg.prefix(cut)), name: "cut\(cut).jpg") else {
                Issue.record("JPEG truncated at \(cut) of \(jpeg.count) was not reported as corrupt")
                continue
            }
        }
    }

    @Test func corruptPNGDataIsAnError() throws {
        var png = try ImageEncoder.png(photoLikeImage(width: 100, height: 100))
        // Damage bytes inside IDAT: the CRC or the inflate stream fails.
        for i in stride(from: png.count / 2, to: png.count / 2 + 40, by: 1) { png[i] ^= 0x5A }
        guard case .corrupt? = reason(png, name: "damaged.png") else {
            Issue.record("damaged PNG was not reported as corrupt")
            return
        }
    }

    /// PNG headers that claim huge images are refused from the header, before any pixel memory.
    @Test(arguments: [(100_000, 100_000), (65_000, 65_000)])
    func decompressionBombPNGIsRefused(width: Int, height: Int) {
        let bomb = pngHeaderOnly(width: UInt32(width), height: UInt32(height))
        #expect(reason(bomb, name: "bomb.png") == .tooLarge(width: UInt32(width), height: UInt32(height), limit: DecodeLimits().maxPixels))
    }

    @Test func decompressionBombJPEGIsRefused() throws {
        var jpeg = try ImageEncoder.jpeg(photoLikeImage(width: 16, height: 16))
        // Patch the SOF0 frame size to 65000 × 65000.
        let sof = try #require((0..<jpeg.count - 9).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg[sof + 5] = 0xFD
        jpeg[sof + 6] = 0xE8
        jpeg[sof + 7] = 0xFD
        jpeg[sof + 8] = 0xE8
        #expect(reason(jpeg, name: "bomb.jpg") == .tooLarge(width: 65000, height: 65000, limit: DecodeLimits().maxPixels))
    }

    @Test func interlacedImagesHaveTheirOwnLimit() {
        let big = pngHeaderOnly(width: 10_000, height: 10_000, interlaced: true)
        #expect(reason(big, name: "interlaced.png") == .tooLarge(width: 10_000, height: 10_000, limit: DecodeLimits().maxBufferedPixels))
    }

    @Test func unreadableFileNamesTheReason() {
        let dir = TemporaryDirectory()
        do {
            _ = try Thumbnailer.thumbnail(ofFileAt: dir.appending("missing.png"), options: .init(maxWidth: 8, maxHeight: 8))
            Issue.record("no error")
        } catch {
            #expect(error.description == dir.appending("missing.png") + ": cannot read: No such file or directory")
        }
    }

    /// A valid PNG header and an IDAT that ends at once.
    func pngHeaderOnly(width: UInt32, height: UInt32, interlaced: Bool = false) -> [UInt8] {
        var ihdr = PNGWriter.be32(width) + PNGWriter.be32(height)
        ihdr += [8, 2, 0, 0, interlaced ? 1 : 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + PNGWriter.chunk("IHDR", ihdr)
            + PNGWriter.chunk("IDAT", PNGWriter.zlibStored([0, 0, 0, 0])) + PNGWriter.chunk("IEND", [])
    }
}
