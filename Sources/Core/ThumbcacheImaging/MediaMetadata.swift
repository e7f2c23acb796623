/// What a document or a recording says of itself, for the index (Spotlight's names in
/// parentheses): a decoder fills in what its format carries and leaves the rest nil.
package struct MediaMetadata: Sendable, Hashable, Codable {
    /// (kMDItemTitle)
    package var title: String?
    /// Writers, or a recording's artists (kMDItemAuthors).
    package var authors: [String]?
    /// The application that made a document (kMDItemCreator).
    package var creator: String?
    /// (kMDItemAlbum)
    package var album: String?
    /// (kMDItemMusicalGenre)
    package var genre: String?
    /// (kMDItemRecordingYear)
    package var recordingYear: Int?
    /// (kMDItemAudioTrackNumber)
    package var trackNumber: Int?
    /// (kMDItemDurationSeconds)
    package var durationSeconds: Double?
    /// The streams' codecs, video first ("H.264", "AAC") (kMDItemCodecs).
    package var codecs: [String]?
    /// Bits per second (kMDItemVideoBitRate, kMDItemAudioBitRate).
    package var videoBitRate: Double?
    package var audioBitRate: Double?
    /// (kMDItemAudioChannelCount)
    package var audioChannelCount: Int?
    /// Hertz (kMDItemAudioSampleRate).
    package var audioSampleRate: Double?
    /// (kMDItemNumberOfPages)
    package var pageCount: Int?
    /// The first page's size in points (kMDItemPageWidth, kMDItemPageHeight).
    package var pageWidth: Double?
    package var pageHeight: Double?
    /// Font family names (kMDItemFonts).
    package var fonts: [String]?
    /// The movie of a Motion Photo (kMDItemIsMotionPhoto and the two after it).
    package var motionPhoto: MotionPhoto?
    /// A Live Photo's movie: the identifier its still carries too (QuickTime's
    /// `com.apple.quicktime.content.identifier`; kMDItemLivePhotoContentIdentifier).
    package var contentIdentifier: String?

    package init() {}
}
