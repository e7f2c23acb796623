import ThumbcacheSync

/// How the image fills the pixel box.
public enum ResizeMode: String, Sendable, Hashable, Codable {
    /// The whole image inside the box, aspect ratio kept.
    case fit
    /// The box filled, the image centred and cropped.
    case fill
}

/// What a thumbnail should be.
package struct ThumbnailOptions: Sendable, Hashable, Codable {
    /// The pixel box (size × scale).
    package var maxWidth: Int
    package var maxHeight: Int
    package var mode: ResizeMode
    package var kernel: ResamplingKernel
    package var limits: DecodeLimits
    /// Never enlarge an image smaller than the box.
    package var allowUpscaling: Bool
    /// Resample in linear light (slower: no integer box stage) rather than on sRGB values.
    package var linearLight: Bool
    /// The page of a document to draw, 0 the first (a file without pages has only that one).
    package var page = 0

    package init(
        maxWidth: Int, maxHeight: Int, mode: ResizeMode = .fit, kernel: ResamplingKernel = .lanczos3,
        limits: DecodeLimits = DecodeLimits(), allowUpscaling: Bool = false, linearLight: Bool = false
    ) {
        self.linearLight = linearLight
        self.maxWidth = max(1, maxWidth)
        self.maxHeight = max(1, maxHeight)
        self.mode = mode
        self.kernel = kernel
        self.limits = limits
        self.allowUpscaling = allowUpscaling
    }
}

/// What is known of a source image.
package struct ImageInfo: Sendable, Hashable, Codable {
    package var format: ImageFormat
    /// Displayed size (after orientation).
    package var pixelWidth: Int
    package var pixelHeight: Int
    package var orientation: Orientation
    package var hasAlpha: Bool
    package var exif: EXIFData?
    /// Bits per sample as stored, when the decoder says.
    package var bitsPerSample: Int?
    /// The stored colour model ("RGB", "Gray", "CMYK"…), when the decoder says.
    package var colorSpace: String?
    /// Frames of an animation (or pages), when the format tells cheaply.
    package var frameCount: Int?
    /// What a document or recording says of itself (pages, duration, codecs, title…).
    package var media: MediaMetadata?

    package init(format: ImageFormat, pixelWidth: Int, pixelHeight: Int, orientation: Orientation, hasAlpha: Bool,
                exif: EXIFData? = nil, bitsPerSample: Int? = nil, colorSpace: String? = nil, frameCount: Int? = nil) {
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.exif = exif
        self.bitsPerSample = bitsPerSample
        self.colorSpace = colorSpace
        self.frameCount = frameCount
    }

    init(format: ImageFormat, header: RowSourceHeader, orientation: Orientation, exif: EXIFData?) {
        let turned = orientation.swapsDimensions
        self.init(format: format, pixelWidth: turned ? header.height : header.width, pixelHeight: turned ? header.width : header.height,
                  orientation: orientation, hasAlpha: header.hasAlpha, exif: exif, bitsPerSample: header.bitsPerSample,
                  colorSpace: header.colorSpace, frameCount: header.frameCount)
        media = header.media
    }
}

/// Makes thumbnails: decode (shrink-on-load for JPEG) → streaming downscale → orientation.
///
/// Images that must be held whole while decoding (progressive JPEG: libjpeg keeps every
/// coefficient, up to 6 bytes per pixel; Adam7 PNG: 4 bytes per pixel) reserve their estimated
/// bytes against a process-wide budget, 192 MiB, so parallel workers cannot stack
/// several such buffers (two 30 MP progressive JPEGs at once took a warm to 288 MB), while smaller
/// ones still decode side by side. Streamed images reserve nothing.
package enum Thumbnailer {
    /// Bytes of whole-image decode buffers allowed in flight at once in this process. A single
    /// image larger than this decodes alone.
    package static let bufferedDecodeBudget = 192 << 20

    private static let bufferedDecodes = MemoryGate(capacity: bufferedDecodeBudget)

    private static func whileBuffering<T>(_ bytes: Int, _ body: () throws(ImagingError) -> T) throws(ImagingError) -> T {
        guard bytes > 0 else { return try body() }
        bufferedDecodes.acquire(bytes)
        defer { bufferedDecodes.release(bytes) }
        return try body()
    }

    /// A thumbnail of the image at `path`, upright, within (or filling) the box.
    /// - Parameters:
    ///   - path: the image file (a `String`, file `URL` or `FilePath`).
    ///   - options: the box, how to fit it, the kernel and the decode limits.
    ///   - format: the format if the caller already knows it from the file's bytes (saves
    ///     reading them again); the decoders check the signature anyway.
    ///   - decoders: the formats to recognise and how to decode them.
    package static func thumbnail(
        ofFileAt path: some FileLocation, options: ThumbnailOptions, format: ImageFormat? = nil,
        decoders: ImageDecoders = .standard
    ) throws(ImagingError) -> (image: RGBAImage, info: ImageInfo) {
        let path = path.fileSystemPath
        let file = try ImageFile(path: path)
        return try thumbnail(ofDescriptor: file.descriptor, name: path, options: options, format: format, decoders: decoders)
    }

    /// A thumbnail of the image on `descriptor` (read from its start; the caller keeps it open):
    /// what a worker that is handed descriptors, never paths, calls. `name` is for errors;
    /// `fallback` is the format to read it as when no decoder recognises its bytes (text).
    package static func thumbnail(
        ofDescriptor descriptor: Int32, name: String, options: ThumbnailOptions, format: ImageFormat? = nil,
        fallback: ImageFormat? = nil, decoders: ImageDecoders = .standard
    ) throws(ImagingError) -> (image: RGBAImage, info: ImageInfo) {
        let (format, source) = try decoders.open(descriptor, name: name, format: format, fallback: fallback, page: options.page)
        return try thumbnail(of: source, format: format, name: name, options: options, threads: decoders.settings.threads)
    }

    /// Size, orientation and EXIF of the image at `path`, from its header only (no pixels decoded).
    package static func info(
        ofFileAt path: some FileLocation, format: ImageFormat? = nil, decoders: ImageDecoders = .standard
    ) throws(ImagingError) -> ImageInfo {
        let path = path.fileSystemPath
        let file = try ImageFile(path: path)
        return try info(ofDescriptor: file.descriptor, name: path, format: format, decoders: decoders)
    }

    /// ``info(ofFileAt:format:decoders:)`` for an open descriptor.
    package static func info(
        ofDescriptor descriptor: Int32, name: String, format: ImageFormat? = nil, fallback: ImageFormat? = nil,
        decoders: ImageDecoders = .standard
    ) throws(ImagingError) -> ImageInfo {
        let (format, source) = try decoders.open(descriptor, name: name, format: format, fallback: fallback)
        let (exif, turn) = metadata(source.header)
        return ImageInfo(format: format, header: source.header, orientation: turn, exif: exif)
    }

    /// The embedded EXIF (IFD1) thumbnail of a JPEG, upright, or nil if it has none. Fast, but
    /// low quality and possibly stale: a caller must not treat it as the real thumbnail.
    package static func embeddedThumbnail(ofFileAt path: some FileLocation) throws(ImagingError) -> RGBAImage? {
        let path = path.fileSystemPath
        let file = try ImageFile(path: path)
        return try embeddedThumbnail(ofDescriptor: file.descriptor, name: path)
    }

    /// ``embeddedThumbnail(ofFileAt:)`` for an open descriptor.
    package static func embeddedThumbnail(ofDescriptor descriptor: Int32, name: String) throws(ImagingError) -> RGBAImage? {
        guard try ImageDecoders.standard.registration(for: descriptor, name: name).format == .jpeg else { return nil }
        let source = try JPEGSource(descriptor: descriptor, name: name)
        guard let exifBytes = source.exif else { return nil }
        let parsed = exifBytes.withUnsafeBytes { EXIFData.parse($0) }
        guard let parsed, let range = parsed.thumbnailRange else { return nil }
        let thumb = try JPEGSource(bytes: Array(exifBytes[range]), path: name + " (EXIF thumbnail)")
        guard thumb.width > 0, thumb.height > 0, thumb.width <= 1024, thumb.height <= 1024 else { return nil }
        let image = try ImageDecoder.whole(thumb)
        return (parsed.orientation.flatMap(Orientation.init(rawValue:)) ?? .up).apply(to: image)
    }

    /// `image` resized to `options`' box as a decoded file would be (fitted, or filled and
    /// centre-cropped); returned as it is when that changes nothing.
    package static func resize(_ image: RGBAImage, options: ThumbnailOptions) -> RGBAImage {
        let g = geometry(width: image.width, height: image.height, options: options)
        guard g.width != image.width || g.height != image.height else { return image }
        let scaler = StreamingDownscaler(sourceWidth: image.width, sourceHeight: image.height, outputWidth: g.width,
                                         outputHeight: g.height, crop: g.crop, kernel: options.kernel,
                                         premultiply: image.hasAlpha, linearLight: options.linearLight)
        image.pixels.withUnsafeBufferPointer { p in
            for y in 0..<image.height { scaler.push(p.baseAddress! + y * image.width * 4) }
        }
        return scaler.finish()
    }

    // MARK: Geometry

    /// Output size in displayed space and the crop (in displayed space) for a displayed source size.
    static func geometry(width: Int, height: Int, options: ThumbnailOptions) -> (width: Int, height: Int, crop: (x: Int, y: Int, width: Int, height: Int)) {
        let sx = Double(options.maxWidth) / Double(width)
        let sy = Double(options.maxHeight) / Double(height)
        switch options.mode {
        case .fit:
            var s = min(sx, sy)
            if !options.allowUpscaling { s = min(s, 1) }
            let w = max(1, Int((Double(width) * s).rounded()))
            let h = max(1, Int((Double(height) * s).rounded()))
            return (w, h, (0, 0, width, height))
        case .fill:
            var s = max(sx, sy)
            if !options.allowUpscaling { s = min(s, 1) }
            let w = min(options.maxWidth, max(1, Int((Double(width) * s).rounded())))
            let h = min(options.maxHeight, max(1, Int((Double(height) * s).rounded())))
            let cw = min(width, max(1, Int((Double(w) / s).rounded())))
            let ch = min(height, max(1, Int((Double(h) / s).rounded())))
            return (w, h, ((width - cw) / 2, (height - ch) / 2, cw, ch))
        }
    }

    /// The largest shrink-on-load factor (8, 4, 2 or 1, at most `maxShrink`) that still leaves
    /// at least 2× for the final filter on both axes (libvips's rule).
    package static func shrinkFactor(width: Int, height: Int, outputWidth: Int, outputHeight: Int, maxShrink: Int = 8) -> Int {
        let ratio = min(Double(width) / Double(outputWidth), Double(height) / Double(outputHeight))
        for d in [8, 4, 2] where d <= maxShrink && ratio / Double(d) >= 2 { return d }
        return 1
    }

    private static func checkLimits(_ path: String, width: Int, height: Int, buffered: Bool, _ limits: DecodeLimits) throws(ImagingError) {
        let pixels = width.multipliedReportingOverflow(by: height)
        let limit = buffered ? limits.maxBufferedPixels : limits.maxPixels
        if pixels.overflow || pixels.partialValue > limit || width == 0 || height == 0 {
            throw ImagingError(path: path, reason: .tooLarge(width: UInt32(clamping: width), height: UInt32(clamping: height), limit: limit))
        }
    }

    /// The bytes a decode at 1/`shrink` holds, checked against the limit of images held whole.
    /// Over that limit, an image its decoder takes at 1/8 in far less (a progressive JPEG from its DC
    /// scans) is still decoded there, its fallback to a whole-image decode refused; up to the
    /// limit, the budget counts what that fallback would hold.
    private static func heldBytes(_ header: RowSourceHeader, shrink: Int, source: any RowSource, name: String,
                                  limits: DecodeLimits) throws(ImagingError) -> Int {
        guard header.buffered else { return header.bufferedBytes }
        let pixels = header.width.multipliedReportingOverflow(by: header.height)
        if shrink == 8, let eighth = header.bufferedAtEighth, pixels.overflow || pixels.partialValue > limits.maxBufferedPixels {
            source.limitWholeImageDecode(toPixels: limits.maxBufferedPixels)
            return eighth
        }
        try checkLimits(name, width: header.width, height: header.height, buffered: true, limits)
        return header.bufferedBytes
    }

    /// Stored-space (width, height, crop) from displayed-space geometry.
    private static func storedGeometry(
        _ g: (width: Int, height: Int, crop: (x: Int, y: Int, width: Int, height: Int)), orientation: Orientation
    ) -> (width: Int, height: Int, crop: (x: Int, y: Int, width: Int, height: Int)) {
        guard orientation.swapsDimensions else { return g }
        // Centred crops are symmetric, so swapping axes maps the displayed crop onto stored pixels.
        return (g.height, g.width, (g.crop.y, g.crop.x, g.crop.height, g.crop.width))
    }

    /// A header's camera metadata (its EXIF block parsed, else what the decoder's library read)
    /// and how its pixels turn: the format's own orientation if it states one, else EXIF's.
    private static func metadata(_ header: RowSourceHeader) -> (exif: EXIFData?, orientation: Orientation) {
        let exif = header.exif.flatMap { bytes in bytes.withUnsafeBytes { EXIFData.parse($0) } } ?? header.metadata
        return (exif, header.orientation ?? exif?.orientation.flatMap(Orientation.init(rawValue:)) ?? .up)
    }

    /// What both formats do after the header: parse EXIF, find the orientation and the displayed
    /// size, and lay out the output and crop in stored pixels.
    private static func plan(_ header: RowSourceHeader, options: ThumbnailOptions) -> Plan {
        let (width, height) = (header.width, header.height)
        let (exif, turn) = metadata(header)
        let (dw, dh) = turn.swapsDimensions ? (height, width) : (width, height)
        let g = storedGeometry(geometry(width: dw, height: dh, options: options), orientation: turn)
        return Plan(exif: exif, orientation: turn, displayedWidth: dw, displayedHeight: dh, output: g)
    }

    private struct Plan {
        var exif: EXIFData?
        var orientation: Orientation
        var displayedWidth: Int
        var displayedHeight: Int
        var output: (width: Int, height: Int, crop: (x: Int, y: Int, width: Int, height: Int))
    }

    // MARK: Decoding

    /// Any format: the header plans the output and the shrink-on-load, then rows stream through
    /// the downscaler; orientation is applied to the small result.
    /// `threads` above 1: the rows are downscaled on a second thread beside the decoding.
    static func thumbnail(of source: any RowSource, format: ImageFormat, name: String,
                          options: ThumbnailOptions, threads: Int = 1) throws(ImagingError) -> (image: RGBAImage, info: ImageInfo) {
        // A drawing's stated size costs nothing: its limits apply to the size it is drawn at.
        // The witness must agree with the cast it replaces (a type that conformed elsewhere would not).
        assert((source.scalable == nil) == !(source is any ScalableRowSource), "\(type(of: source)): its scalable witness disagrees with its conformance")
        if let scalable = source.scalable {
            return try thumbnail(of: scalable, format: format, name: name, options: options)
        }
        let header = source.header
        // A recording without a cover: read fine, nothing to draw.
        if header.width == 0 || header.height == 0, header.media != nil {
            throw ImagingError(path: name, reason: .noPicture("\(format) file without an embedded picture"))
        }
        try checkLimits(name, width: header.width, height: header.height, buffered: false, options.limits)
        let p = plan(header, options: options)
        let g = p.output
        // The shrink is chosen on the crop, which is what gets resized.
        let d = shrinkFactor(width: g.crop.width, height: g.crop.height, outputWidth: g.width, outputHeight: g.height,
                             maxShrink: header.maxShrink)
        let held = try heldBytes(header, shrink: d, source: source, name: name, limits: options.limits)
        // The fast decode only where at least 2× of shrinking follows.
        let remaining = min(Double(g.crop.width) / Double(d * g.width), Double(g.crop.height) / Double(d * g.height))
        // A buffered decode's memory is taken in start and given back when readRows ends.
        let downscaled = try whileBuffering(held) { () throws(ImagingError) -> RGBAImage in
            let (sw, sh) = try source.start(shrink: d, fast: remaining >= 2, output: (g.width, g.height))
            let crop = scaledCrop(g.crop, from: (header.width, header.height), to: (sw, sh), shrink: d)
            let (kernel, premultiply, linearLight) = (options.kernel, header.hasAlpha, options.linearLight)
            let makeScaler = { @Sendable in
                StreamingDownscaler(sourceWidth: sw, sourceHeight: sh, outputWidth: g.width, outputHeight: g.height, crop: crop,
                                    kernel: kernel, premultiply: premultiply, linearLight: linearLight)
            }
            // Worth a thread only where the filter has work: a source larger than the output.
            if threads > 1, sw * sh > 4 * g.width * g.height {
                return try PipelinedRows.downscale(source, name: name, rowBytes: sw * 4, scaler: makeScaler)
            }
            let scaler = makeScaler()
            try source.readRows { scaler.push($0) }
            return scaler.finish()
        }
        let image = p.orientation.apply(to: downscaled)
        return (image, ImageInfo(format: format, header: source.header, orientation: p.orientation, exif: p.exif))
    }

    /// The stored-space crop on the rows a decoder delivers at `size` for a shrink of `d`. Decoders
    /// that shrink by `d` round sizes up (ceil(width / d)) and the crop is scaled the same way; one
    /// that did not shrink delivers the stored size; one that chose another size (a TIFF's reduced
    /// page) gets the crop scaled by the true ratio.
    static func scaledCrop(_ crop: (x: Int, y: Int, width: Int, height: Int), from stored: (Int, Int), to size: (Int, Int),
                           shrink d: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let (sw, sh) = size
        let exact = sw == (stored.0 + d - 1) / d && sh == (stored.1 + d - 1) / d
        if sw == stored.0 && sh == stored.1 || exact {
            let k = sw == stored.0 && sh == stored.1 ? 1 : d
            let x = min(crop.x / k, sw - 1), y = min(crop.y / k, sh - 1)
            return (x, y, max(1, min((crop.width + k - 1) / k, sw - x)), max(1, min((crop.height + k - 1) / k, sh - y)))
        }
        let rx = Double(sw) / Double(stored.0), ry = Double(sh) / Double(stored.1)
        let x = min(Int(Double(crop.x) * rx), sw - 1), y = min(Int(Double(crop.y) * ry), sh - 1)
        return (x, y, max(1, min(Int((Double(crop.width) * rx).rounded(.up)), sw - x)),
                max(1, min(Int((Double(crop.height) * ry).rounded(.up)), sh - y)))
    }

    /// A vector source: rendered once at the size the box calls for (enlarged too: a 16-pixel
    /// icon drawn at 256 is sharp), then cropped for `.fill` and turned.
    private static func thumbnail(of source: any ScalableRowSource, format: ImageFormat, name: String,
                                  options: ThumbnailOptions) throws(ImagingError) -> (image: RGBAImage, info: ImageInfo) {
        var scaled = options
        scaled.allowUpscaling = true
        let header = source.header
        let p = plan(header, options: scaled)
        let g = p.output
        // The whole drawing at the scale that brings the crop to the output size.
        let s = min(Double(g.width) / Double(g.crop.width), Double(g.height) / Double(g.crop.height))
        let rw = max(1, Int((Double(header.width) * s).rounded())), rh = max(1, Int((Double(header.height) * s).rounded()))
        try checkLimits(name, width: rw, height: rh, buffered: true, options.limits)  // drawn whole
        let (sw, sh) = try source.start(width: rw, height: rh)
        let crop = scaledCrop(g.crop, from: (header.width, header.height), to: (sw, sh), shrink: 1)
        // Drawn at the output's size, uncropped (a page, most drawings): the canvas is the image,
        // not copied row by row into another of the same size (a 1024-pixel preview's 3 MB).
        if crop == (0, 0, g.width, g.height), sw == g.width, sh == g.height, let rows = source.takeRows(), rows.count == sw * sh * 4 {
            let image = p.orientation.apply(to: RGBAImage(width: sw, height: sh, pixels: rows, hasAlpha: header.hasAlpha))
            return (image, ImageInfo(format: format, header: header, orientation: p.orientation, exif: p.exif))
        }
        let scaler = StreamingDownscaler(
            sourceWidth: sw, sourceHeight: sh, outputWidth: g.width, outputHeight: g.height, crop: crop, kernel: options.kernel,
            premultiply: header.hasAlpha, linearLight: options.linearLight)
        try source.readRows { scaler.push($0) }
        let image = p.orientation.apply(to: scaler.finish())
        return (image, ImageInfo(format: format, header: header, orientation: p.orientation, exif: p.exif))
    }
}

/// A counting gate over bytes: `acquire(n)` waits while others hold permits and `n` more would
/// pass the capacity; a request larger than the capacity proceeds when nothing else is held.
final class MemoryGate: Sendable {
    private let capacity: Int
    private let inUse = ConditionLockedState(0)

    init(capacity: Int) { self.capacity = capacity }

    func acquire(_ bytes: Int) {
        inUse.withLock(waitingUntil: { $0 == 0 || $0 + bytes <= capacity }) { $0 += bytes }
    }

    func release(_ bytes: Int) {
        inUse.withLock { $0 -= bytes }
    }
}
