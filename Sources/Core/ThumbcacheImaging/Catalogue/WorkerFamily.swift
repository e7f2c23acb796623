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

    /// The family whose worker decodes `format` (its catalogue entry's); images when the format
    /// is not catalogued (a file another program wrote, read as an image).
    package init(_ format: ImageFormat?) {
        self = format.flatMap { FormatCatalogue.declaration(of: $0)?.family } ?? .images
    }

    /// The families this one's worker may hand a file on to (the image worker's HEIF path to
    /// libheif's). A worker's answer is not trusted, so a hand-off anywhere else is refused; and
    /// none of these hands on again, so a file is handed on at most once.
    package var mayHandOnTo: Set<WorkerFamily> { self == .images ? [.heavy] : [] }

    /// The worker program's file name.
    package var executableName: String {
        self == .images ? "thumbcache-worker" : "thumbcache-worker-\(rawValue)"
    }
}
