import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

/// Decoding every PNG variant and JPEG flavour to the expected pixels.
struct DecodingTests {
    /// Decodes at full size (box larger than the image, no upscaling): the pixels come back as stored.
    func decode(_ bytes: [UInt8], name: String = "f") throws -> (RGBAImage, ImageInfo) {
        let dir = TemporaryDirectory()
        let path = try dir.write(name, bytes)
        return try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 10_000, maxHeight: 10_000))
    }

    static let w = 13, h = 7  // odd sizes on purpose

    struct Variant: CustomTestStringConvertible, Sendable {
        var colorType: UInt8
        var depth: Int
        var interlaced = false
        var testDescription: String { "type \(colorType) depth \(depth)\(interlaced ? " interlaced" : "")" }
    }

    static let variants: [Variant] = [
        .init(colorType: 0, depth: 1), .init(colorType: 0, depth: 2), .init(colorType: 0, depth: 4),
        .init(colorType: 0, depth: 8), .init(colorType: 0, depth: 16),
        .init(colorType: 2, depth: 8), .init(colorType: 2, depth: 16),
        .init(colorType: 3, depth: 1), .init(colorType: 3, depth: 2), .init(colorType: 3, depth: 4), .init(colorType: 3, depth: 8),
        .init(colorType: 4, depth: 8), .init(colorType: 4, depth: 16),
        .init(colorType: 6, depth: 8), .init(colorType: 6, depth: 16),
        .init(colorType: 2, depth: 8, interlaced: true), .init(colorType: 6, depth: 16, interlaced: true),
        .init(colorType: 3, depth: 4, interlaced: true),
    ]

    /// The expected 8-bit RGBA of pixel (x, y) for a variant, and the PNG's stored samples.
    static func pixel(_ v: Variant, _ x: Int, _ y: Int) -> (rgba: [Int], samples: [Int]) {
        let maxSample = (1 << v.depth) - 1
        let level = (x * 3 + y * 5) % (maxSample + 1)
        func to8(_ s: Int) -> Int { v.depth == 16 ? (s * 255 + 32767) / 65535 : s * 255 / maxSample }
        switch v.colorType {
        case 0:
            return ([to8(level), to8(level), to8(level), 255], [level])
        case 2:
            let r = level, g = (maxSample - level), b = (x * maxSample) / (Self.w - 1)
            return ([to8(r), to8(g), to8(b), 255], [r, g, b])
        case 3:
            let index = (x + y) % (1 << min(v.depth, 4))
            let p = palette[index]
            return ([Int(p.0), Int(p.1), Int(p.2), Int(transparency[index])], [index])
        case 4:
            let a = (x * maxSample) / (Self.w - 1)
            return ([to8(level), to8(level), to8(level), to8(a)], [level, a])
        default:
            let a = (y * maxSample) / (Self.h - 1)
            let r = level, g = (maxSample - level), b = (x * maxSample) / (Self.w - 1)
            return ([to8(r), to8(g), to8(b), to8(a)], [r, g, b, a])
        }
    }

    static let palette: [(UInt8, UInt8, UInt8)] = {
        var entries: [(UInt8, UInt8, UInt8)] = []
        for i in 0..<16 {
            let r = UInt8(i * 16)
            let g = UInt8(255 - i * 16)
            let b = UInt8((i * 77) % 256)
            entries.append((r, g, b))
        }
        return entries
    }()
    static let transparency: [UInt8] = {
        var alphas: [UInt8] = []
        for i in 0..<16 { alphas.append(i % 3 == 0 ? 255 : UInt8(i * 15)) }
        return alphas
    }()

    @Test(arguments: variants)
    func everyPNGVariantDecodes(_ v: Variant) throws {
        let bytes = PNGWriter.make(
            width: Self.w, height: Self.h, colorType: v.colorType, depth: v.depth, interlaced: v.interlaced,
            palette: v.colorType == 3 ? Array(Self.palette.prefix(1 << min(v.depth, 4))) : [],
            transparency: v.colorType == 3 ? Array(Self.transparency.prefix(1 << min(v.depth, 4))) : nil
        ) { x, y in Self.pixel(v, x, y).samples }
        let (image, info) = try decode(bytes)
        #expect(info.format == .png)
        #expect(image.width == Self.w && image.height == Self.h)
        var worst = 0
        for y in 0..<Self.h {
            for x in 0..<Self.w {
                let expected = Self.pixel(v, x, y).rgba
                let i = (y * Self.w + x) * 4
                let alpha = Int(image.pixels[i + 3])
                #expect(abs(alpha - expected[3]) <= 1, "alpha at \(x),\(y)")
                // Colour under (nearly) zero alpha carries no information after premultiplication.
                guard expected[3] >= 16 else { continue }
                for c in 0..<3 { worst = max(worst, abs(Int(image.pixels[i + c]) - expected[c])) }
            }
        }
        // Premultiplied resampling at 1:1 rounds through alpha: allow a little more under low alpha.
        #expect(worst <= 8, "largest colour error \(worst)")
    }

    @Test(arguments: [false, true])
    func jpegBaselineAndProgressiveDecode(progressive: Bool) throws {
        let source = photoLikeImage(width: 64, height: 48)
        let jpeg = try ImageEncoder.jpeg(source, quality: 95, progressive: progressive)
        let (image, info) = try decode(jpeg, name: "photo.jpg")
        #expect(info.format == .jpeg)
        #expect(image.width == 64 && image.height == 48)
        #expect(psnr(image, source) > 35)
    }

    @Test func formatIsDetectedByBytesNotName() throws {
        let png = try ImageEncoder.png(photoLikeImage(width: 8, height: 8))
        let (_, info) = try decode(png, name: "actually-a-png.jpg")
        #expect(info.format == .png)
        let jpeg = try ImageEncoder.jpeg(photoLikeImage(width: 8, height: 8))
        let (_, noExtension) = try decode(jpeg, name: "no-extension")
        #expect(noExtension.format == .jpeg)
    }

    @Test func shrinkOnLeavesAtLeastTwiceForTheFilter() {
        #expect(Thumbnailer.shrinkFactor(width: 4000, height: 3000, outputWidth: 256, outputHeight: 192) == 4)
        #expect(Thumbnailer.shrinkFactor(width: 8000, height: 6000, outputWidth: 256, outputHeight: 192) == 8)
        #expect(Thumbnailer.shrinkFactor(width: 1000, height: 750, outputWidth: 256, outputHeight: 192) == 1)
        #expect(Thumbnailer.shrinkFactor(width: 1024, height: 768, outputWidth: 256, outputHeight: 192) == 2)
    }

    @Test func largeJPEGUsesShrinkOnLoadAndFitsTheBox() throws {
        let source = photoLikeImage(width: 1601, height: 1201)
        let jpeg = try ImageEncoder.jpeg(source, quality: 90)
        let dir = TemporaryDirectory()
        let path = try dir.write("big.jpg", jpeg)
        let (thumb, info) = try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 256, maxHeight: 256))
        #expect(info.pixelWidth == 1601 && info.pixelHeight == 1201)
        #expect(thumb.width == 256 && thumb.height == 192)
        let reference = referenceResize(source, width: 256, height: 192)
        #expect(psnr(thumb, reference) > 32)
    }

    @Test func fillModeCropsToTheBox() throws {
        let png = try ImageEncoder.png(photoLikeImage(width: 300, height: 100))
        let dir = TemporaryDirectory()
        let path = try dir.write("wide.png", png)
        let (thumb, _) = try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 64, maxHeight: 64, mode: .fill))
        #expect(thumb.width == 64 && thumb.height == 64)
        // The middle third of the source: red rises across it from about 1/3 to 2/3 of 255.
        #expect((70...100).contains(Int(thumb.pixels[4 * (32 * 64 + 1)])))
        #expect((155...185).contains(Int(thumb.pixels[4 * (32 * 64 + 62)])))
    }
}

/// 16-bit sources: a smooth gradient whose values fall between 8-bit steps is resized to within
/// one 8-bit step of the exact (float64, 16-bit) result everywhere, with no run of pixels stuck
/// on one level where the exact result moves on (banding).
struct SixteenBitTests {
    @Test func smoothSixteenBitGradientHasNoBanding() throws {
        let w = 1024, h = 8
        // Red rises by 1/16 of an 8-bit step per pixel: 64 source pixels per 8-bit level.
        func red16(_ x: Int) -> Int { 1_000 + x * 16 }
        let png = PNGWriter.make(width: w, height: h, colorType: 2, depth: 16) { x, _ in [red16(x), 30_000, 40_000] }
        let dir = TemporaryDirectory()
        let path = try dir.write("gradient16.png", png)
        let (thumb, _) = try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 128, maxHeight: 128))
        #expect(thumb.width == 128 && thumb.height == 1)
        var bias = 0.0
        for x in 0..<128 {
            // Exact value: the mean of the 8 source pixels under this output pixel, in 8-bit units.
            let exact = (0..<8).map { Double(red16(x * 8 + $0)) * 255 / 65535 }.reduce(0, +) / 8
            let got = Double(thumb.pixels[4 * x])
            // Interior pixels (the kernel is symmetric there): within half a step plus rounding.
            if x > 2 && x < 125 {
                #expect(abs(got - exact) <= 1.0, "x \(x): \(got) vs \(exact)")
                bias += got - exact
            }
        }
        // Truncating 16 → 8 bits (v >> 8) instead of rounding (v / 257) would shift these low
        // values by -0.25 to -0.5 of a step.
        #expect(abs(bias / 122) < 0.1, "mean error \(bias / 122)")
    }
}

/// JPEG flavours: chroma subsamplings, restart markers, grayscale, CMYK and YCCK.
struct JPEGFlavourTests {
    func roundTrip(_ source: RGBAImage, _ options: ImageEncoder.JPEGOptions) throws -> RGBAImage {
        let dir = TemporaryDirectory()
        let path = try dir.write("f.jpg", ImageEncoder.jpeg(source, options: options))
        return try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: 4096, maxHeight: 4096)).image
    }

    @Test(arguments: [(2, 2), (2, 1), (1, 2), (1, 1)])
    func everyChromaSubsamplingDecodes(h: Int, v: Int) throws {
        let source = photoLikeImage(width: 97, height: 61)
        var options = ImageEncoder.JPEGOptions(quality: 95)
        options.lumaSampling = (h, v)
        let image = try roundTrip(source, options)
        #expect(image.width == 97 && image.height == 61)
        #expect(psnr(image, source) > 33, "\(h)x\(v)")
    }

    @Test(arguments: [false, true])
    func restartMarkersDecode(progressive: Bool) throws {
        let source = photoLikeImage(width: 120, height: 90)
        var options = ImageEncoder.JPEGOptions(quality: 95, progressive: progressive)
        options.restartRows = 1
        let jpeg = try ImageEncoder.jpeg(source, options: options)
        #expect(jpeg.indices.dropLast().contains { jpeg[$0] == 0xFF && (0xD0...0xD7).contains(jpeg[$0 + 1]) })  // RSTn present
        let dir = TemporaryDirectory()
        let image = try Thumbnailer.thumbnail(ofFileAt: try dir.write("r.jpg", jpeg), options: .init(maxWidth: 4096, maxHeight: 4096)).image
        #expect(psnr(image, source) > 33)
    }

    @Test func grayscaleDecodesToEqualChannels() throws {
        let source = photoLikeImage(width: 64, height: 40)
        var options = ImageEncoder.JPEGOptions(quality: 95)
        options.color = .gray
        let image = try roundTrip(source, options)
        for p in stride(from: 0, to: image.pixels.count, by: 4) {
            #expect(image.pixels[p] == image.pixels[p + 1] && image.pixels[p + 1] == image.pixels[p + 2])
        }
        // Gray carries the red channel of the source.
        let red = source.pixels.enumerated().map { $0.offset % 4 == 3 ? 255 : source.pixels[$0.offset - $0.offset % 4] }
        #expect(psnr(image, RGBAImage(width: 64, height: 40, pixels: red, hasAlpha: false)) > 35)
    }

    /// CMYK and YCCK with Adobe's inverted convention: (C′, M′, Y′, K′) = (R, G, B, 255) is RGB.
    @Test(arguments: [ImageEncoder.JPEGOptions.Color.cmyk, .ycck])
    func adobeCMYKAndYCCKConvertToRGB(color: ImageEncoder.JPEGOptions.Color) throws {
        let source = photoLikeImage(width: 64, height: 40)
        var options = ImageEncoder.JPEGOptions(quality: 95)
        options.color = color
        let image = try roundTrip(source, options)
        #expect(psnr(image, source) > 33, "\(color)")
    }
}
