import ThumbcacheImaging
import ThumbcacheStore

/// Stored in every thumbnail key: bump it when the pixels made for the same input change, and
/// old thumbnails (and recorded failures) are no longer used.
package let thumbnailGeneratorVersion: UInt32 = 1

/// The generator version in a preview's key (and `serve`'s ETag for it), bumped when a page
/// shows other pixels. 2: a document of words without a stored picture starts with its words.
package let previewGeneratorVersion: UInt32 = 2

/// One thumbnail to make: the pixel box and what else shapes the pixels.
public struct ThumbnailSpec: Sendable, Hashable {
    public var boxWidth: Int
    public var boxHeight: Int
    /// Pixels per point.
    public var scale: Double
    public var mode: ResizeMode
    public var linearLight: Bool
    /// The page a preview shows, 0 the first; only a preview's key names it.
    package var page = 0

    public init(boxWidth: Int, boxHeight: Int, scale: Double = 1, mode: ResizeMode = .fit, linearLight: Bool = false) {
        self.boxWidth = max(1, boxWidth)
        self.boxHeight = max(1, boxHeight)
        self.scale = scale
        self.mode = mode
        self.linearLight = linearLight
    }

    /// A square box of `size` points at `scale`.
    public init(size: Int, scale: Double = 1) {
        let side = Int((Double(size) * scale).rounded())
        self.init(boxWidth: side, boxHeight: side, scale: scale)
    }

    package func variant(_ kind: RepresentationKind) -> ThumbnailVariant {
        ThumbnailVariant(kind: kind, fit: mode == .fill ? .fill : .fit, color: linearLight ? .linearLight : .gammaEncoded,
                         generatorVersion: kind == .preview ? previewGeneratorVersion : thumbnailGeneratorVersion,
                         page: kind == .preview ? UInt32(page) : 0)
    }

    package func key(for content: ContentHash, kind: RepresentationKind = .thumbnail) -> ThumbnailKey {
        ThumbnailKey(content: content, boxWidth: UInt32(boxWidth), boxHeight: UInt32(boxHeight), variant: variant(kind))
    }
}
