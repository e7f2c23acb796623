import ThumbcacheImaging
#if canImport(Glibc)
import Glibc
#endif

/// The worker protocol, version 4 (Docs/SECURITY.md): the parent sends a request frame with the
/// file's descriptor attached; the worker answers with a reply frame. Frames are a little-endian
/// header of lengths, a document (``WorkerCoding``), and for images the raw RGBA pixels.
package enum WorkerProtocol {
    package static let version = 4
    /// Largest document either side accepts: a reply's metadata is a few hundred bytes.
    package static let maxDocumentBytes = 1 << 20
    /// The file descriptor the worker finds its channel on.
    package static let channelDescriptor: Int32 = 3
    /// A forked worker's argument saying its parent sends its prepared system-call filter on the
    /// descriptor after the channel (``WorkerFork/sendFilter``).
    package static let preparedFilterFlag = "--prepared-filter"
    /// An early worker's argument (``EarlyWorker``): the rest of its
    /// arguments come on the descriptor after the channel, before any prepared filter.
    package static let argumentsFollowFlag = "--arguments-follow"

    /// The arguments an early worker is sent: their length in bytes (four, little-endian), then
    /// each ended by a zero byte.
    static func argumentsMessage(_ arguments: [String]) -> [UInt8] {
        var body: [UInt8] = []
        for argument in arguments { body += argument.utf8 + [0] }
        return withUnsafeBytes(of: UInt32(body.count).littleEndian) { Array($0) } + body
    }

    /// The arguments an early worker reads from `descriptor` (``argumentsMessage(_:)``); nil
    /// when the descriptor closed first: its program did not need it.
    package static func readArguments(from descriptor: Int32) -> [String]? {
        func read(_ count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count), done = 0
            while done < count {
                let n = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + done, count - done) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                done += n
            }
            return bytes
        }
        guard let length = read(4).map({ $0.reversed().reduce(0) { $0 << 8 | Int($1) } }), length <= maxDocumentBytes,
              let body = read(length) else { return nil }
        return body.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }
}

/// What the parent asks of a worker for one file.
package struct WorkerRequest: Sendable {
    /// Its raw value is its byte in a request (``WorkerCoding``).
    package enum Kind: UInt8, Sendable {
        case thumbnail = 0
        case info = 1
        case embeddedThumbnail = 2
        /// The file's words as UTF-8, at most ``WorkerRequest/textLimit`` bytes, after the document.
        case text = 3
    }

    package var kind: Kind
    /// The file's path, for the worker's error messages only: it never opens paths.
    package var name: String
    package var options: ThumbnailOptions?
    /// The format to read the file as if the worker's decoders recognise none in its bytes: the
    /// parent's type for a format bytes cannot name (text). Never overrides what the bytes say.
    package var fallback: String?
    /// Most bytes of text a ``Kind/text`` request wants back; on a ``Kind/thumbnail`` request,
    /// the file's words are wanted too, after the pixels (a reply with a ``WorkerReply/textFormat``).
    package var textLimit: Int?
}

/// A reply as the parent read it: its pixels and its words split apart, each checked against it.
struct WorkerAnswer {
    var reply: WorkerReply
    var pixels: [UInt8]
    var words: [UInt8]

    /// The words and the format whose extractor read them, if the reply has any. The worker is not
    /// trusted to send UTF-8: what is not becomes U+FFFD here.
    var text: (format: ImageFormat, text: String)? {
        reply.textFormat.map { (ImageFormat(rawValue: $0), String(decoding: words, as: UTF8.self)) }
    }
}

/// A worker's answer. `image` describes the pixels that follow the document, and `textFormat`
/// the words that follow those (the payload, in that order).
package struct WorkerReply: Sendable {
    package struct Hello: Sendable {
        package var version: Int
        /// The confinement layers the worker applied (Docs/SECURITY.md), or why it could not.
        package var layers: [String]
        package var error: String?

        package init(version: Int, layers: [String], error: String?) {
            self.version = version
            self.layers = layers
            self.error = error
        }
    }

    package struct Image: Sendable {
        package var width: Int
        package var height: Int
        package var hasAlpha: Bool
    }

    package var hello: Hello?
    package var image: Image?
    package var info: ImageInfo?
    package var error: ImagingError?
    /// The format whose extractor read the text that follows the document (a text reply), or
    /// the pixels (a thumbnail's reply that brings the words along).
    package var textFormat: String?

    package init(hello: Hello? = nil, image: Image? = nil, info: ImageInfo? = nil, error: ImagingError? = nil, textFormat: String? = nil) {
        self.hello = hello
        self.image = image
        self.info = info
        self.error = error
        self.textFormat = textFormat
    }
}
