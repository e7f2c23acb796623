/// Generating a thumbnail failed.
public struct GenerationError: Error, Sendable, CustomStringConvertible {
    public enum Reason: Sendable, CustomStringConvertible {
        /// No provider handles this exact type.
        case noProvider(ContentType)
        /// Generation failed before, for the same bytes and generator version (retry with
        /// --retry-failed): the record kept then, its kind and reason.
        case failedBefore(FailureRecord)
        /// The pixel box is smaller than the provider's (or the request's) minimum dimension.
        case belowMinimumDimension(Int)
        /// The name promises a format (`photo.jpg`) the bytes are not: they are `content`.
        case notWhatItsNameSays(named: ContentType, content: ContentType)
        /// Only a low-quality image was asked for and the file has none: no embedded preview,
        /// and no smaller thumbnail of it in the cache.
        case noLowQualityImage

        public var description: String {
            switch self {
            case .noProvider(let type): "no thumbnail provider for \(type)"
            case .failedBefore(let record): "\(record.reason) (recorded earlier; not retried)"
            case .belowMinimumDimension(let minimum): "below the minimum dimension of \(minimum) px"
            case .notWhatItsNameSays(let named, let content): "not a valid \(named.displayName) (its content is \(content))"
            case .noLowQualityImage: "no low-quality image (no embedded preview, and no smaller thumbnail in the cache)"
            }
        }
    }

    public var path: String
    public var reason: Reason
    public var description: String { "\(path): \(reason)" }
}
