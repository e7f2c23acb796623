import Synchronization
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheWorker

/// Makes thumbnails for some content types, after QuickLook's `QLThumbnailProvider`.
///
/// A provider is matched by **exact** type identifier (not conformance): one that declares
/// `public.image` is not asked for `public.png`. Below ``minimumDimension`` (the smaller side of
/// the pixel box) the generic icon is returned instead of calling it.
public protocol ThumbnailProvider: Sendable {
    /// The exact types this provider handles.
    var contentTypes: Set<ContentType> { get }
    /// Smallest box side, in pixels, worth a real thumbnail; 0 for any.
    var minimumDimension: Int { get }
    /// Makes the thumbnail. Runs on a worker thread; may block; throws to fail this file.
    func provideThumbnail(for request: ThumbnailProviderRequest) throws -> ThumbnailReply
}

extension ThumbnailProvider {
    public var minimumDimension: Int { 0 }
}

/// What a provider is asked for.
public struct ThumbnailProviderRequest: Sendable {
    public var path: String
    public var contentType: ContentType
    /// The pixel box the thumbnail must fit (size × scale).
    public var maximumWidth: Int
    public var maximumHeight: Int
    public var scale: Double
    /// Fit the box, or fill it (centred and cropped); pixels that do not match are resized to it.
    public var mode: ResizeMode
    /// Resample in linear light.
    public var linearLight: Bool
    /// The page to draw, 0 the first (a preview of a later page). A provider without pages is
    /// asked only for the first.
    public var page = 0
    /// Where the built-in decoders run for this request (set by the generator or the warmer).
    package var decoding: (any ImageDecoding)?
    /// Where the built-in provider leaves the header it decoded, for the index.
    package var decodedHeader: DecodedHeader?

    public init(path: String, contentType: ContentType, maximumWidth: Int, maximumHeight: Int, scale: Double,
                mode: ResizeMode = .fit, linearLight: Bool = false) {
        self.path = path
        self.contentType = contentType
        self.maximumWidth = maximumWidth
        self.maximumHeight = maximumHeight
        self.scale = scale
        self.mode = mode
        self.linearLight = linearLight
    }
}

/// A provider's answer, in one of three forms.
public enum ThumbnailReply: Sendable {
    /// Finished pixels; resized to the box if larger.
    case pixels(RGBAImage)
    /// A drawing into a transparent RGBA canvas of `width × height` pixels (each side at most
    /// four times the box's larger side), then resized to the box like pixels.
    case drawing(width: Int, height: Int, draw: @Sendable (inout RGBACanvas) throws -> Void)
    /// An image file (PNG or JPEG) to make the thumbnail from, such as a preview the format embeds.
    case imageFile(path: String)
}

/// A canvas a provider draws into: straight-alpha RGBA, origin top left.
public struct RGBACanvas: Sendable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// Fills a rectangle (clipped to the canvas) with a colour.
    public mutating func fill(x: Int, y: Int, width w: Int, height h: Int, red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + w), y1 = min(height, y + h)
        guard x0 < x1, y0 < y1 else { return }
        for row in y0..<y1 {
            for column in x0..<x1 {
                let i = (row * width + column) * 4
                pixels[i] = red
                pixels[i + 1] = green
                pixels[i + 2] = blue
                pixels[i + 3] = alpha
            }
        }
    }

    public var image: RGBAImage {
        RGBAImage(width: width, height: height, pixels: pixels, hasAlpha: pixels.enumerated().contains { $0.offset % 4 == 3 && $0.element != 255 })
    }
}

/// The built-in provider for every format thumbcache decodes (`FormatCatalogue.all`, and
/// every text type as a page of text): streaming decode, shrink-on-load, orientation; the
/// request's mode and colour handling.
///
/// Catalogued formats decode where the request says (a sandboxed worker, as a rule, which has
/// every decoder); in-process, only PNG, JPEG and what `decoders` adds are linked.
public struct ImageThumbnailProvider: ThumbnailProvider {
    package let decoders: ImageDecoders
    /// Whether the text types (read from shared-mime-info) are among ``contentTypes``.
    private var servesText = true

    public var contentTypes: Set<ContentType> {
        let formats = Set((decoders.registrations.map(\.typeIdentifier) + FormatCatalogue.all.map(\.typeIdentifier)).map { ContentType($0) })
        return servesText ? formats.union(TextTypes.identifiers) : formats
    }

    /// PNG and JPEG in process; every catalogued format in a worker.
    public init() { self.init(decoders: .standard) }

    package init(decoders: ImageDecoders) {
        self.decoders = decoders
    }

    /// This provider for a file whose first bytes name a catalogued format (a one-file call's):
    /// without the text types, so that shared-mime-info's database is not read for it.
    package static var formatsOnly: ImageThumbnailProvider {
        var provider = ImageThumbnailProvider()
        provider.servesText = false
        return provider
    }

    public func provideThumbnail(for request: ThumbnailProviderRequest) throws -> ThumbnailReply {
        var options = ThumbnailOptions(maxWidth: request.maximumWidth, maxHeight: request.maximumHeight, mode: request.mode,
                                       linearLight: request.linearLight)
        options.page = request.page
        // The content type came from the file's first bytes already: no need to read them again.
        let format = decoders.format(ofType: request.contentType.identifier)
            ?? FormatCatalogue.declaration(ofType: request.contentType)?.format
            ?? (TextTypes.isText(request.contentType) ? .text : nil)
        // A catalogued format goes where the request says; a format only this provider's
        // decoders know is decoded here.
        let made = if let decoding = request.decoding, let format, FormatCatalogue.declaration(of: format) != nil {
            try decoded(by: decoding, request, options: options, format: format)
        } else {
            try Thumbnailer.thumbnail(ofFileAt: request.path, options: options, format: format, decoders: decoders)
        }
        request.decodedHeader?.info = made.info
        return .pixels(made.image)
    }

    /// The thumbnail, with the file's words along when the index wants them.
    private func decoded(by decoding: any ImageDecoding, _ request: ThumbnailProviderRequest, options: ThumbnailOptions, format: ImageFormat) throws
        -> (image: RGBAImage, info: ImageInfo)
    {
        guard let header = request.decodedHeader, let limit = header.wordsLimit, header.words == nil else {
            return try decoding.thumbnail(ofFileAt: request.path, options: options, format: format)
        }
        let (image, info, words) = try decoding.thumbnail(ofFileAt: request.path, options: options, format: format, wordsUpTo: limit)
        header.words = words?.text
        return (image, info)
    }
}

/// The header of the image a provider decoded, passed back to whoever indexes the file; and,
/// when the index wants the file's words, those words if they came with the decode.
package final class DecodedHeader: Sendable {
    /// The file's words are wanted too, at most this many bytes; nil when they are not.
    package let wordsLimit: Int?
    /// The header boxed: an `ImageInfo` is hundreds of bytes, and most files of a re-warm make
    /// a header that stays empty (its copies were a twentieth of such a re-warm).
    private final class Box: Sendable {
        let info: ImageInfo
        init(_ info: ImageInfo) { self.info = info }
    }
    private let found = Mutex<(info: Box?, words: String?)>((nil, nil))

    package init(wordsLimit: Int? = nil) {
        self.wordsLimit = wordsLimit
    }

    package var info: ImageInfo? {
        get { found.withLock { $0.info }?.info }
        set { found.withLock { $0.info = newValue.map(Box.init) } }
    }

    /// Whether a decode left a header: no copy of it.
    package var hasInfo: Bool { found.withLock { $0.info != nil } }

    /// The words that came with a decode (a later decode of the file need not bring them again).
    package var words: String? {
        get { found.withLock { $0.words } }
        set { found.withLock { $0.words = newValue } }
    }
}
