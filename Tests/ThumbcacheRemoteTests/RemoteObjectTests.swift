import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheStore
@testable import ThumbcacheRemote

/// A gradient with a little seeded noise, so that PNG has something to compress.
func remoteTestImage(width: Int, height: Int, seed: UInt64 = 1) -> RGBAImage {
    var state = seed &* 0x9E37_79B9_7F4A_7C15
    var pixels = [UInt8](repeating: 255, count: width * height * 4)
    for y in 0..<height {
        for x in 0..<width {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let i = (y * width + x) * 4
            pixels[i] = UInt8(truncatingIfNeeded: x * 255 / max(1, width - 1))
            pixels[i + 1] = UInt8(truncatingIfNeeded: y * 255 / max(1, height - 1))
            pixels[i + 2] = UInt8(truncatingIfNeeded: state >> 59)
        }
    }
    return RGBAImage(width: width, height: height, pixels: pixels, hasAlpha: false)
}

/// The object a remote tier stores: a PNG with the `tcAt` chunk, read back exactly and checked.
struct RemoteObjectTests {
    static let key = ThumbnailKey(content: ContentHash(high: 0x0123_4567_89AB_CDEF, low: 42), boxWidth: 256, boxHeight: 256,
                                  variant: ThumbnailVariant(generatorVersion: 7))

    static func thumbnail(width: Int = 200, height: Int = 150) throws -> RemoteThumbnail {
        let image = remoteTestImage(width: width, height: height)
        let header = ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: false, pixelWidth: UInt32(width), pixelHeight: UInt32(height),
                                     scale: 1, created: 1_700_000_000_000_000_000, sourceContentType: "public.jpeg")
        var info = ImageInfo(format: .jpeg, pixelWidth: 4000, pixelHeight: 3000, orientation: .up, hasAlpha: false, bitsPerSample: 8)
        info.media = MediaMetadata()
        info.media?.title = "Lighthouse"
        return RemoteThumbnail(header: header, data: try ImageEncoder.png(image), attributes: info)
    }

    @Test func anObjectIsAPNGThatGivesBackTheStoredBytes() throws {
        let original = try Self.thumbnail()
        let object = try original.object()
        // Any PNG reader shows it: the chunk is ancillary.
        let shown = try ImageDecoder.png(object)
        #expect(shown.width == 200 && shown.height == 150)
        let (back, image) = try RemoteThumbnail.parse(object, for: Self.key)
        #expect(back == original, "header, bytes and attributes all come back")
        #expect(image == (try ImageDecoder.png(original.data)))
    }

    @Test func whatIsNotAThumbnailForTheKeyIsRefused() throws {
        let good = try Self.thumbnail().object()
        func refused(_ bytes: [UInt8], key: ThumbnailKey = Self.key, _ comment: Comment) {
            #expect(throws: RemoteError.Reason.self, comment) { try RemoteThumbnail.parse(bytes, for: key) }
        }
        var flipped = good
        flipped[flipped.count / 2] ^= 0x40
        refused(flipped, "a flipped bit fails a CRC")
        refused(Array(good.prefix(good.count - 20)), "cut short")
        refused([], "empty")
        refused(Array(repeating: 0x41, count: 5000), "not a PNG")
        refused(try ImageEncoder.png(remoteTestImage(width: 50, height: 50)), "a PNG without the chunk is another program's")
        let small = ThumbnailKey(content: Self.key.content, boxWidth: 128, boxHeight: 128, variant: Self.key.variant)
        refused(good, key: small, "larger than the box asked for")
        var lowQuality = Self.key
        lowQuality.variant.kind = .lowQuality
        refused(good, key: lowQuality, "another kind")
        // A header that lies about the pixels.
        var lying = try Self.thumbnail()
        lying.header.pixelWidth = 100
        refused(try lying.object(), "header and pixels disagree")
        // Attributes that are not JSON.
        var object = try Self.thumbnail().object()
        let at = object.count - 12 - 4 - 1
        object[at] = 0x7B
        refused(object, "a CRC catches a changed attribute byte")
    }

    @Test func objectNamesSpreadByHashAndNameTheVariant() {
        #expect(RemoteLayout.objectName(for: Self.key, prefix: "thumbs/") ==
                "thumbs/tc1/01/0123456789abcdef000000000000002a/256x256-0300000000000007.png")
    }

    @Test func theUploadPolicySkipsSmallCommonImages() {
        let policy = UploadPolicy.default
        #expect(!policy.shouldUpload(sourceBytes: 20_000, type: "public.jpeg"))
        #expect(policy.shouldUpload(sourceBytes: 40_000, type: "public.jpeg"))
        #expect(policy.shouldUpload(sourceBytes: 20_000, type: "com.adobe.pdf"), "a page costs more than its bytes suggest")
        #expect(UploadPolicy.everything.shouldUpload(sourceBytes: 1, type: "public.png"))
    }

    @Test func bucketNamesFollowS3sRule() {
        #expect(RemoteLocation.isBucketName("thumbs-01.example"))
        #expect(!RemoteLocation.isBucketName("Thumbs"))
        #expect(!RemoteLocation.isBucketName("ab"))
        #expect(!RemoteLocation.isBucketName("-thumbs"))
        #expect(throws: RemoteError.self) { try RemoteCache.open("ftp://x/y", environment: [:]) }
        #expect(throws: RemoteError.self) { try RemoteCache.open("s3://UPPER/x", environment: [:]) }
    }
}
