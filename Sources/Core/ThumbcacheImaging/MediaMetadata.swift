/// What a document or a recording says of itself, for the index (Spotlight's names in
/// parentheses): a decoder fills in what its format carries and leaves the rest nil.
public struct MediaMetadata: Sendable, Hashable, Codable {
    /// (kMDItemTitle)
    public var title: String?
    /// Writers, or a recording's artists (kMDItemAuthors).
    public var authors: [String]?
    /// The application that made a document (kMDItemCreator).
    public var creator: String?
    /// (kMDItemAlbum)
    public var album: String?
    /// (kMDItemMusicalGenre)
    public var genre: String?
    /// (kMDItemRecordingYear)
    public var recordingYear: Int?
    /// (kMDItemAudioTrackNumber)
    public var trackNumber: Int?
    /// (kMDItemDurationSeconds)
    public var durationSeconds: Double?
    /// The streams' codecs, video first ("H.264", "AAC") (kMDItemCodecs).
    public var codecs: [String]?
    /// Bits per second (kMDItemVideoBitRate, kMDItemAudioBitRate).
    public var videoBitRate: Double?
    public var audioBitRate: Double?
    /// (kMDItemAudioChannelCount)
    public var audioChannelCount: Int?
    /// Hertz (kMDItemAudioSampleRate).
    public var audioSampleRate: Double?
    /// (kMDItemNumberOfPages)
    public var pageCount: Int?
    /// The first page's size in points (kMDItemPageWidth, kMDItemPageHeight).
    public var pageWidth: Double?
    public var pageHeight: Double?
    /// Font family names (kMDItemFonts).
    public var fonts: [String]?

    public init() {}
}
