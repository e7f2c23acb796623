/// EXIF orientation: how the stored pixels must be turned to be displayed upright.
package enum Orientation: Int, Sendable, Hashable, Codable, CaseIterable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// True for 5…8, where displayed width and height are the stored height and width.
    package var swapsDimensions: Bool { rawValue >= 5 }

    /// Turns `image` (stored pixels) into the displayed image.
    package func apply(to image: RGBAImage) -> RGBAImage {
        if self == .up { return image }
        let w = image.width, h = image.height
        let (dw, dh) = swapsDimensions ? (h, w) : (w, h)
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        image.pixels.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for y in 0..<dh {
                    for x in 0..<dw {
                        let (sx, sy): (Int, Int) =
                            switch self {
                            case .up: (x, y)
                            case .upMirrored: (w - 1 - x, y)
                            case .down: (w - 1 - x, h - 1 - y)
                            case .downMirrored: (x, h - 1 - y)
                            case .leftMirrored: (y, x)
                            case .right: (y, h - 1 - x)
                            case .rightMirrored: (w - 1 - y, h - 1 - x)
                            case .left: (w - 1 - y, x)
                            }
                        dst.storeBytes(
                            of: src.loadUnaligned(fromByteOffset: (sy * w + sx) * 4, as: UInt32.self),
                            toByteOffset: (y * dw + x) * 4, as: UInt32.self)
                    }
                }
            }
        }
        return RGBAImage(width: dw, height: dh, pixels: out, hasAlpha: image.hasAlpha)
    }
}
