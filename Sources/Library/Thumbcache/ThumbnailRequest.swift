import Synchronization
import ThumbcacheImaging
import ThumbcacheStore

/// A request for a file's thumbnail, after `QLThumbnailGenerator.Request`.
public struct ThumbnailRequest: Sendable, Hashable, Identifiable {
    /// Which representations the caller wants.
    public struct RepresentationTypes: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The generic icon of the file's type.
        public static let icon = RepresentationTypes(rawValue: 1)
        /// A fast, lower-quality image: the embedded EXIF thumbnail, or a smaller cached one.
        public static let lowQualityThumbnail = RepresentationTypes(rawValue: 2)
        /// The real thumbnail.
        public static let thumbnail = RepresentationTypes(rawValue: 4)
        /// A large look at the page ``ThumbnailRequest/page`` names, at the request's size (a
        /// screen's, as a rule): made on demand, cached, and evicted before any thumbnail.
        public static let preview = RepresentationTypes(rawValue: 8)
        /// Every kind of thumbnail: icon, low quality, thumbnail (not the preview).
        public static let all: RepresentationTypes = [.icon, .lowQualityThumbnail, .thumbnail]
    }

    private static let counter = Atomic<UInt64>(0)

    /// Unique per request made, for ``ThumbnailGenerator/cancel(_:)``.
    public let id: UInt64
    public var path: String
    /// Size in points; the pixel box is size × scale.
    public var width: Double
    public var height: Double
    /// Pixels per point.
    public var scale: Double
    public var representationTypes: RepresentationTypes
    /// If the real thumbnail's smaller side would be below this (points), the icon is used instead.
    public var minimumDimension: Double
    /// Use this type instead of detecting it from the file.
    public var contentType: ContentType?
    public var mode: ResizeMode
    /// The page a preview shows, 0 the first: a document's or a comic's page. Thumbnails are
    /// always of the first page.
    public var page: Int

    public init(fileAt path: some FileLocation, size: Double, scale: Double = 1, representationTypes: RepresentationTypes = .all) {
        self.init(fileAt: path, width: size, height: size, scale: scale, representationTypes: representationTypes)
    }

    public init(fileAt path: some FileLocation, width: Double, height: Double, scale: Double = 1,
                representationTypes: RepresentationTypes = .all) {
        id = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.path = path.fileSystemPath
        self.width = width
        self.height = height
        self.scale = scale
        self.representationTypes = representationTypes
        minimumDimension = 0
        contentType = nil
        mode = .fit
        page = 0
    }

    /// The pixel box and variant this request's thumbnails resolve to.
    package var spec: ThumbnailSpec {
        ThumbnailSpec(boxWidth: Int((width * scale).rounded()), boxHeight: Int((height * scale).rounded()), scale: scale, mode: mode)
    }

    /// The pixel box and page of this request's preview: always fitted, in gamma-encoded values.
    package var previewSpec: ThumbnailSpec {
        var spec = ThumbnailSpec(boxWidth: Int((width * scale).rounded()), boxHeight: Int((height * scale).rounded()), scale: scale)
        spec.page = page
        return spec
    }
}

/// One representation of a file, after `QLThumbnailRepresentation`.
public struct ThumbnailRepresentation: Sendable {
    public var kind: RepresentationKind
    /// Size of the image in pixels.
    public var pixelWidth: Int
    public var pixelHeight: Int
    public var scale: Double
    /// Where the image sits inside the requested pixel box (centred), in pixels.
    public var contentRect: (x: Int, y: Int, width: Int, height: Int)
    public var encoding: ThumbnailEncoding
    /// The encoded image (see ``encoding``).
    public var data: [UInt8]
    /// True if it came from the cache without generating anything.
    public var fromCache: Bool
    /// Why a lesser representation stands in for the thumbnail asked for, when making it failed
    /// (a decoder's error, a failure recorded earlier); nil when it was simply not asked for or
    /// the type has none.
    public var standsInBecause: String?

    init(kind: RepresentationKind, header: ThumbnailHeader, data: [UInt8], box: ThumbnailSpec, fromCache: Bool) {
        self.kind = kind
        pixelWidth = Int(header.pixelWidth)
        pixelHeight = Int(header.pixelHeight)
        scale = Double(header.scale)
        encoding = header.encoding
        self.data = data
        self.fromCache = fromCache
        contentRect = ((box.boxWidth - pixelWidth) / 2, (box.boxHeight - pixelHeight) / 2, pixelWidth, pixelHeight)
    }

    /// A representation made in another process (the session's daemon), as it was described there.
    package init(kind: RepresentationKind, pixelWidth: Int, pixelHeight: Int, scale: Double, contentRect: (x: Int, y: Int, width: Int, height: Int),
                 encoding: ThumbnailEncoding, data: [UInt8], fromCache: Bool, standsInBecause: String?) {
        self.kind = kind
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.scale = scale
        self.contentRect = contentRect
        self.encoding = encoding
        self.data = data
        self.fromCache = fromCache
        self.standsInBecause = standsInBecause
    }

    /// Size in points (pixels ÷ scale).
    public var pointSize: (width: Double, height: Double) { (Double(pixelWidth) / scale, Double(pixelHeight) / scale) }

    /// The pixels, decoded from ``data``.
    ///
    /// - Throws: `ImagingError` naming the representation (such as "(thumbnail representation)")
    ///   when its bytes do not decode or do not hold the pixels they claim.
    public func image() throws(ImagingError) -> RGBAImage {
        try Self.decode(data, encoding: encoding, width: pixelWidth, height: pixelHeight, name: "(\(kind) representation)")
    }

    /// The pixels of a stored thumbnail's bytes, whichever its encoding.
    static func decode(_ data: [UInt8], encoding: ThumbnailEncoding, width: Int, height: Int, name: String) throws(ImagingError) -> RGBAImage {
        switch encoding {
        case .png: return try ImageDecoder.png(data, name: name)
        case .jpeg: return try ImageDecoder.jpeg(data, name: name)
        case .rgba8:
            guard width > 0, height > 0, data.count == width * height * 4 else {
                throw ImagingError(path: name, reason: .corrupt("\(data.count) bytes for \(width)×\(height) RGBA pixels"))
            }
            return RGBAImage(width: width, height: height, pixels: data, hasAlpha: true)
        }
    }

    /// PNG bytes.
    public func pngData() throws -> [UInt8] {
        encoding == .png ? data : try ImageEncoder.png(image())
    }
}

extension ThumbnailRecord {
    /// The stored thumbnail's pixels (thumbcache's own PNG, as a rule).
    package func image(name: String = "(stored thumbnail)") throws(ImagingError) -> RGBAImage {
        try ThumbnailRepresentation.decode(data, encoding: header.encoding, width: Int(header.pixelWidth), height: Int(header.pixelHeight),
                                           name: name)
    }
}

