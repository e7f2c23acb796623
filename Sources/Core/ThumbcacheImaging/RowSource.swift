/// A decoder's view of one image: the header, read when it was opened (cheap), then rows.
///
/// The split follows libvips's loaders: the planner picks the shrink from the header before a
/// pixel is decoded, and peak memory stays at a few rows unless the format must be held whole.
package protocol RowSource: AnyObject {
    /// What the header says: stored size, alpha, metadata, how far it can shrink on load.
    var header: RowSourceHeader { get }
    /// Starts decoding at 1/`shrink` of the stored size, rounded up (`shrink` is at most the
    /// header's ``RowSourceHeader/maxShrink``); `fast` allows a cheaper decode where the result
    /// is shrunk at least 2× more. Returns the size of the rows that follow.
    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int)
    /// ``start(shrink:fast:)`` told also the output size (stored orientation) the rows will be
    /// resized to: a decoder with an embedded preview (HEIF) uses the preview when it is at least
    /// that large. By default the output size is not needed.
    func start(shrink: Int, fast: Bool, output: (width: Int, height: Int)) throws(ImagingError) -> (width: Int, height: Int)
    /// Feeds every row, top to bottom, as straight-alpha RGBA8 (`width × 4` bytes each).
    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError)
    /// Before ``start(shrink:fast:)`` at 1/8 of an image counted by its
    /// ``RowSourceHeader/bufferedAtEighth``: where the decode would fall back to holding the whole
    /// image, it refuses one over `pixels` (``ImagingError/Reason/tooLarge(width:height:limit:)``).
    func limitWholeImageDecode(toPixels pixels: Int)
    /// This source as a ``ScalableRowSource``, if it is one: a witness chosen when the type was
    /// compiled, where a cast would look the conformance up at run time by scanning every
    /// conformance record linked in (PERFORMANCE.md).
    var scalable: (any ScalableRowSource)? { get }
}

extension RowSource {
    package var scalable: (any ScalableRowSource)? { nil }

    package func start(shrink: Int, fast: Bool, output: (width: Int, height: Int)) throws(ImagingError) -> (width: Int, height: Int) {
        try start(shrink: shrink, fast: fast)
    }

    package func limitWholeImageDecode(toPixels pixels: Int) {}
}

/// A source drawn at any size (a vector format): the planner asks for the exact size it needs.
package protocol ScalableRowSource: RowSource {
    /// Starts rendering the whole image at `width × height`; returns the size of the rows.
    func start(width: Int, height: Int) throws(ImagingError) -> (width: Int, height: Int)
    /// After ``start(width:height:)``, instead of ``RowSource/readRows(_:)``: the rows as one
    /// buffer, handed over without a copy, when the source holds them whole (a drawing); nil
    /// for a source that streams them.
    func takeRows() -> [UInt8]?
}

extension ScalableRowSource {
    package var scalable: (any ScalableRowSource)? { self }

    package func takeRows() -> [UInt8]? { nil }

    /// A shrink is a drawing at 1/`shrink` of the stated size, rounded up.
    package func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        let d = max(1, shrink)
        return try start(width: (header.width + d - 1) / d, height: (header.height + d - 1) / d)
    }
}

/// What a decoder knows after reading an image's header.
package struct RowSourceHeader: Sendable, Hashable {
    /// Stored size in pixels (before orientation).
    package var width: Int
    package var height: Int
    package var hasAlpha: Bool
    /// The raw EXIF block, if the file has one before its pixels.
    package var exif: [UInt8]?
    /// The largest shrink-on-load factor (1: none; JPEG's DCT scaling: 8).
    package var maxShrink: Int
    /// True if the decoder holds the whole image while decoding (interlaced PNG, progressive JPEG).
    package var buffered: Bool
    /// Bytes a buffered decode holds (estimated); 0 when it streams.
    package var bufferedBytes: Int
    /// Bytes a buffered decode holds when started at 1/8, where the decoder then holds far less
    /// than the whole image (a progressive JPEG decoded from its DC scans); nil otherwise.
    package var bufferedAtEighth: Int?
    /// How the stored pixels are turned for display when the format says so itself (TIFF's
    /// Orientation tag, a raw file's flip), or `.up` when the decoder already turned them (HEIF's
    /// irot/imir); nil: EXIF's orientation, if any.
    package var orientation: Orientation?
    /// Bits per sample as stored (8, 16, 32…), for the index.
    package var bitsPerSample: Int?
    /// The stored colour model ("RGB", "Gray", "CMYK", "YCbCr", "Palette"), for the index.
    package var colorSpace: String?
    /// Frames (animation) or pages the file holds, if the format says cheaply; 1 or nil for a still.
    package var frameCount: Int?
    /// Camera metadata the decoder's library read itself (a raw file's), used when there is no
    /// EXIF block to parse.
    package var metadata: EXIFData?
    /// What a document or recording says of itself (pages, duration, title…).
    package var media: MediaMetadata?

    package init(width: Int, height: Int, hasAlpha: Bool, exif: [UInt8]? = nil, maxShrink: Int = 1,
                buffered: Bool = false, bufferedBytes: Int = 0, orientation: Orientation? = nil,
                bitsPerSample: Int? = nil, colorSpace: String? = nil, frameCount: Int? = nil, metadata: EXIFData? = nil,
                media: MediaMetadata? = nil) {
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.exif = exif
        self.maxShrink = maxShrink
        self.buffered = buffered
        self.bufferedBytes = bufferedBytes
        self.orientation = orientation
        self.bitsPerSample = bitsPerSample
        self.colorSpace = colorSpace
        self.frameCount = frameCount
        self.metadata = metadata
        self.media = media
    }
}

/// How the decoders of one registry may work: a worker's are told by its parent (`--threads`),
/// and each open passes them on to the decoder, so no decoder reads a process-wide setting. An
/// open adds what its request asks (the page).
package struct DecodeSettings: Sendable, Hashable {
    /// Threads one decode may use: a decoder that can split an image (a HEIF grid's tiles) uses up to this many.
    package var threads: Int
    /// The page to draw, 0 the first: only a registration that ``ImageDecoderRegistration/hasPages`` is asked for another.
    package var page = 0

    package init(threads: Int = 1) { self.threads = max(1, threads) }
}
