import ThumbcacheImaging

/// Which worker program decodes a format. Each family's libraries load only in its own worker:
/// loading every family's (FFmpeg's above all) was most of a worker's start, and so of a one-file
/// `get` (Docs/SECURITY.md, "Worker families").
package enum WorkerFamily: String, CaseIterable, Sendable, Hashable {
    /// PNG, JPEG and the bitmap formats' libraries: `thumbcache-worker`.
    case images
    /// SVG through librsvg, cairo and pango: `thumbcache-worker-vector`.
    case vector
    /// The image libraries slowest to load: libheif for the HEIF and AVIF files the image
    /// worker hands on, libjxl for JPEG XL: `thumbcache-worker-heavy`.
    case heavy
    /// PDF, text, fonts and documents that carry a picture: `thumbcache-worker-documents`.
    case documents
    /// Video and audio through FFmpeg: `thumbcache-worker-media`.
    case media

    /// The family whose worker decodes `format`; images when the format is not known (a file
    /// another program wrote, read as an image).
    package init(_ format: ImageFormat?) {
        self = format.flatMap { Self.byFormat[$0] } ?? .images
    }

    private static let byFormat: [ImageFormat: WorkerFamily] = {
        var families: [ImageFormat: WorkerFamily] = [:]
        for signature in MediaFormats.movies + MediaFormats.audio { families[signature.format] = .media }
        for signature in MediaFormats.documents + MediaFormats.text + MediaFormats.fonts { families[signature.format] = .documents }
        families[.svg] = .vector
        families[.jpegXL] = .heavy
        return families
    }()

    /// The families this one's worker may hand a file on to (the image worker's HEIF path to
    /// libheif's). A worker's answer is not trusted, so a hand-off anywhere else is refused; and
    /// none of these hands on again, so a file is handed on at most once.
    package var mayHandOnTo: Set<WorkerFamily> { self == .images ? [.heavy] : [] }

    /// The worker program's file name.
    package var executableName: String {
        self == .images ? "thumbcache-worker" : "thumbcache-worker-\(rawValue)"
    }
}
