/// An image could not be made into a thumbnail: which file, and why.
public struct ImagingError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The file could not be opened or read.
        case unreadable(String)
        /// The file is empty.
        case empty
        /// The bytes are of no format thumbcache decodes.
        case unsupportedFormat
        /// The format is known but its decoder is not linked into this process (it runs in the
        /// sandboxed worker only).
        case decoderNotInProcess(format: String)
        /// The header claims more pixels than the limit allows (a decompression bomb, or just huge).
        case tooLarge(width: UInt32, height: UInt32, limit: Int)
        /// The decoder rejected the data: truncated, corrupt, or not what its header says.
        case corrupt(String)
        /// Encoding the thumbnail failed.
        case encodingFailed(String)
        /// The file is read fine but has no picture to show (an audio file without a cover): the
        /// type's icon stands for it.
        case noPicture(String)
        /// This process's decoder leaves the file to another worker program, which `by` names (a
        /// worker family): a HEIF the direct path does not handle goes to the one with libheif.
        /// The worker pool sends it there; elsewhere it is the reason the file failed.
        case decodedElsewhere(by: String)
        /// The format has no words thumbcache extracts (a photo), so it has no text to index.
        case noTextExtractor(format: String)
        /// A page (or frame) was asked for that the file does not have: `page` counts from 1,
        /// `pages` is how many it has (1 for a format without pages).
        case noSuchPage(page: Int, pages: Int)

        public var description: String {
            switch self {
            case .unreadable(let message): "cannot read: \(message)"
            case .empty: "empty file"
            case .unsupportedFormat: "not an image format thumbcache decodes"
            case .decoderNotInProcess(let format): "\(format) is decoded only in the sandboxed worker, not in-process"
            case .tooLarge(let w, let h, let limit): "image too large: \(w)×\(h) pixels exceeds the limit of \(limit) pixels"
            case .corrupt(let message): "corrupt or truncated image: \(message)"
            case .encodingFailed(let message): "cannot encode thumbnail: \(message)"
            case .noPicture(let what): "no picture to show: \(what)"
            case .decodedElsewhere(let family): "decoded only by the \(family) worker"
            case .noTextExtractor(let format): "thumbcache extracts no text from \(format) files"
            case .noSuchPage(let page, let pages): "no page \(page): the file has \(pages) page\(pages == 1 ? "" : "s")"
            }
        }
    }

    public var path: String
    public var reason: Reason

    package init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
