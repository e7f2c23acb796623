import Foundation
import ThumbcacheImaging

/// Pictures the tests draw, so that a reference never comes from a decoder under test.
package enum TestPictures {
    /// A photo-like source: smooth gradients, an off-centre disc (so a turn or a mirror shows) and,
    /// if asked, alpha falling from opaque (top left) to clear (bottom right).
    /// `image` with each pixel's channels set to its luma (BT.601 weights, truncated): a gray
    /// picture whose channels agree, so a gray file made of it stores exactly these values.
    package static func grayed(_ image: RGBAImage) -> RGBAImage {
        var gray = image
        for p in stride(from: 0, to: gray.pixels.count, by: 4) {
            let r: Int = Int(gray.pixels[p]) * 299, g: Int = Int(gray.pixels[p + 1]) * 587, b: Int = Int(gray.pixels[p + 2]) * 114
            let y = UInt8((r + g + b) / 1000)
            (gray.pixels[p], gray.pixels[p + 1], gray.pixels[p + 2]) = (y, y, y)
        }
        return gray
    }

    package static func source(width: Int = 480, height: Int = 320, alpha: Bool = false) -> RGBAImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                let i = (y * width + x) * 4
                let dx = fx - 0.25, dy = fy - 0.3
                let disc = dx * dx + dy * dy < 0.02
                pixels[i] = disc ? 250 : UInt8(clamping: Int(40 + 200 * fx))
                pixels[i + 1] = disc ? 220 : UInt8(clamping: Int(30 + 180 * fy))
                pixels[i + 2] = disc ? 30 : UInt8(clamping: Int(128 + 90 * sin(5 * fx + 2 * fy)))
                if alpha { pixels[i + 3] = UInt8(clamping: Int(255 * (1 - 0.9 * fx * fy))) }
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels, hasAlpha: alpha)
    }

    /// Flat colour areas and a fully transparent square: what palette formats (GIF) hold exactly.
    package static func graphic(width: Int = 480, height: Int = 320, transparent: Bool = true) -> RGBAImage {
        var image = source(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let band = (x * 6 / width + (y * 3 / height) * 2) % 5
                let colours: [(UInt8, UInt8, UInt8)] = [(200, 30, 30), (30, 160, 60), (40, 60, 200), (240, 220, 40), (90, 90, 90)]
                (image.pixels[i], image.pixels[i + 1], image.pixels[i + 2]) = colours[band]
                if transparent && x >= width * 3 / 4 && y < height / 3 { image.pixels[i + 3] = 0 }
            }
        }
        image.hasAlpha = transparent
        return image
    }

    /// PSNR over premultiplied RGBA: colour under full transparency does not count (encoders may
    /// change it), alpha does.
    package static func premultipliedPSNR(_ a: RGBAImage, _ b: RGBAImage) -> Double {
        var sum = 0.0
        for p in stride(from: 0, to: a.pixels.count, by: 4) {
            let aa = Double(a.pixels[p + 3]) / 255, ba = Double(b.pixels[p + 3]) / 255
            for c in 0..<3 {
                let d = Double(a.pixels[p + c]) * aa - Double(b.pixels[p + c]) * ba
                sum += d * d
            }
            let d = Double(a.pixels[p + 3]) - Double(b.pixels[p + 3])
            sum += d * d
        }
        let mse = sum / Double(a.pixels.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// An SVG of flat rectangles; `SIZE` and `IMAGE` are replaced by the test.
    package static let flatSVG = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- rectangles only -->
        <svg xmlns="http://www.w3.org/2000/svg" SIZE viewBox="0 0 40 20">
          <rect x="0" y="0" width="30" height="20" fill="#3060c0"/>
          <rect x="5" y="5" width="10" height="5" fill="#f0d020"/>
          <rect x="30" y="10" width="10" height="10" fill="#20a040"/>
          IMAGE
        </svg>
        """
}

/// A smooth test photo.
package func testPhoto(width: Int, height: Int) -> RGBAImage {
    var pixels = [UInt8](repeating: 255, count: width * height * 4)
    for y in 0..<height {
        for x in 0..<width {
            let i = (y * width + x) * 4
            pixels[i] = UInt8(x * 255 / max(1, width - 1))
            pixels[i + 1] = UInt8(y * 255 / max(1, height - 1))
            pixels[i + 2] = 90
        }
    }
    return RGBAImage(width: width, height: height, pixels: pixels, hasAlpha: false)
}
