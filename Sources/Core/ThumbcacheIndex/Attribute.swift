/// The value of one attribute of an indexed item.
public enum AttributeValue: Sendable, Hashable {
    case string(String)
    case strings([String])
    case number(Double)
    /// Seconds since 1970-01-01 00:00 UTC.
    case date(Double)

    /// The strings of a string or string-list value.
    public var stringValues: [String]? {
        switch self {
        case .string(let s): [s]
        case .strings(let list): list
        default: nil
        }
    }

    /// The number of a number or date value.
    public var numericValue: Double? {
        switch self {
        case .number(let n), .date(let n): n
        default: nil
        }
    }

    var type: AttributeType {
        switch self {
        case .string: .string
        case .strings: .strings
        case .number: .number
        case .date: .date
        }
    }
}

/// What kind of values an attribute holds; stored on disk, so the raw values are fixed.
public enum AttributeType: UInt8, Sendable, Hashable, CustomStringConvertible {
    case string = 1
    case strings = 2
    case number = 3
    case date = 4

    var isText: Bool { self == .string || self == .strings }

    public var description: String {
        switch self {
        case .string: "string"
        case .strings: "string list"
        case .number: "number"
        case .date: "date"
        }
    }
}

/// Spotlight's attribute names for the attributes thumbcache fills in or gives a meaning to.
/// Apps may use any other name; its type is fixed by the first value indexed under it.
public enum MDItem {
    public static let fsName = "kMDItemFSName"
    public static let path = "kMDItemPath"
    public static let fsSize = "kMDItemFSSize"
    public static let contentType = "kMDItemContentType"
    public static let contentTypeTree = "kMDItemContentTypeTree"
    public static let contentCreationDate = "kMDItemContentCreationDate"
    public static let contentModificationDate = "kMDItemContentModificationDate"
    public static let lastUsedDate = "kMDItemLastUsedDate"
    public static let pixelWidth = "kMDItemPixelWidth"
    public static let pixelHeight = "kMDItemPixelHeight"
    public static let orientation = "kMDItemOrientation"
    public static let bitsPerSample = "kMDItemBitsPerSample"
    public static let colorSpace = "kMDItemColorSpace"
    public static let hasAlphaChannel = "kMDItemHasAlphaChannel"
    public static let lensModel = "kMDItemLensModel"
    /// Frames of an animated image (not Spotlight's; Apple has none for images).
    public static let frameCount = "kMDItemFrameCount"
    public static let acquisitionMake = "kMDItemAcquisitionMake"
    public static let acquisitionModel = "kMDItemAcquisitionModel"
    public static let exposureTimeSeconds = "kMDItemExposureTimeSeconds"
    public static let fNumber = "kMDItemFNumber"
    public static let isoSpeed = "kMDItemISOSpeed"
    public static let focalLength = "kMDItemFocalLength"
    public static let latitude = "kMDItemLatitude"
    public static let longitude = "kMDItemLongitude"
    public static let altitude = "kMDItemAltitude"
    public static let userTags = "kMDItemUserTags"
    public static let title = "kMDItemTitle"
    public static let keywords = "kMDItemKeywords"
    public static let description = "kMDItemDescription"
    public static let authors = "kMDItemAuthors"
    public static let comment = "kMDItemComment"
    public static let displayName = "kMDItemDisplayName"
    public static let numberOfPages = "kMDItemNumberOfPages"
    public static let pageWidth = "kMDItemPageWidth"
    public static let pageHeight = "kMDItemPageHeight"
    public static let creator = "kMDItemCreator"
    public static let album = "kMDItemAlbum"
    public static let musicalGenre = "kMDItemMusicalGenre"
    public static let recordingYear = "kMDItemRecordingYear"
    public static let audioTrackNumber = "kMDItemAudioTrackNumber"
    public static let durationSeconds = "kMDItemDurationSeconds"
    public static let codecs = "kMDItemCodecs"
    public static let videoBitRate = "kMDItemVideoBitRate"
    public static let audioBitRate = "kMDItemAudioBitRate"
    public static let audioChannelCount = "kMDItemAudioChannelCount"
    public static let audioSampleRate = "kMDItemAudioSampleRate"
    public static let fonts = "kMDItemFonts"
    /// 1 for a photo with its movie in the same file (a Motion Photo); thumbcache's own, as are
    /// the two below (Docs/MEDIA.md, "Motion Photos").
    public static let isMotionPhoto = "kMDItemIsMotionPhoto"
    /// The length of a Motion Photo's movie.
    public static let motionPhotoVideoDurationSeconds = "kMDItemMotionPhotoVideoDurationSeconds"
    /// The time in the movie that the still shows.
    public static let motionPhotoPresentationSeconds = "kMDItemMotionPhotoPresentationSeconds"
    /// The identifier a Live Photo's still and movie share (Apple's content identifier): both
    /// halves of a pair have the same value.
    public static let livePhotoContentIdentifier = "kMDItemLivePhotoContentIdentifier"
    /// The words inside a file (queried through the full-text index; never stored as an attribute).
    public static let textContent = "kMDItemTextContent"
}

/// Which index structures an attribute's values go into.
struct IndexPolicy: OptionSet, Sendable, Hashable {
    let rawValue: UInt8
    /// Whole values, folded: equality, prefixes and wildcards over the distinct values.
    static let values = IndexPolicy(rawValue: 1)
    /// Each word, folded: the `w` modifier and plain-word search.
    static let words = IndexPolicy(rawValue: 2)
    /// Trigrams of the folded value: substring and wildcard matches on names.
    static let trigrams = IndexPolicy(rawValue: 4)
    /// Every ancestor directory: `--onlyin` and path prefixes.
    static let directories = IndexPolicy(rawValue: 8)
    /// Order-preserving buckets of numbers and dates: ranges.
    static let numeric = IndexPolicy(rawValue: 16)
}

/// An attribute as the index knows it: its stable number, type and index structures.
struct AttributeInfo: Sendable, Hashable {
    let id: UInt16
    let name: String
    let type: AttributeType
    let policy: IndexPolicy
    /// Searched by plain words (`holiday` with no operator), like `mdfind holiday`.
    let isText: Bool
    /// Values are whole numbers (rounded when indexed): a range bound inside a bucket is decided
    /// without reading items.
    let integral: Bool
    /// How finely numbers are bucketed (file sizes: coarsely).
    var buckets: NumericBuckets = .fine

    /// `value` as indexed: whole-number attributes rounded.
    func stored(_ value: AttributeValue) -> AttributeValue {
        if integral, case .number(let n) = value { return .number(n.rounded()) }
        return value
    }
}

/// The attributes with fixed numbers. The numbers are part of the file format (Docs/FORMAT.md):
/// never renumber; add at the end. App attributes get numbers from ``firstDynamicID`` on.
enum Schema {
    /// The "every item" existence list.
    static let allItemsID: UInt16 = 0
    static let firstDynamicID: UInt16 = 1024

    static let builtIn: [AttributeInfo] = {
        let text: IndexPolicy = [.values, .words]
        let name: IndexPolicy = [.trigrams, .words]
        func a(_ id: UInt16, _ n: String, _ t: AttributeType, _ p: IndexPolicy, text: Bool = false, integral: Bool = false,
               buckets: NumericBuckets = .fine) -> AttributeInfo {
            AttributeInfo(id: id, name: n, type: t, policy: p, isText: text, integral: integral, buckets: buckets)
        }
        return [
            a(1, MDItem.fsName, .string, name, text: true),
            a(2, MDItem.path, .string, .directories),
            a(3, MDItem.fsSize, .number, .numeric, integral: true, buckets: .coarse),
            a(4, MDItem.contentType, .string, .values),
            a(5, MDItem.contentTypeTree, .strings, .values),
            a(6, MDItem.contentCreationDate, .date, .numeric),
            a(7, MDItem.contentModificationDate, .date, .numeric),
            a(8, MDItem.lastUsedDate, .date, .numeric),
            a(9, MDItem.pixelWidth, .number, .numeric, integral: true),
            a(10, MDItem.pixelHeight, .number, .numeric, integral: true),
            a(11, MDItem.orientation, .number, .numeric, integral: true),
            a(12, MDItem.acquisitionMake, .string, text),
            a(13, MDItem.acquisitionModel, .string, text),
            a(14, MDItem.exposureTimeSeconds, .number, .numeric),
            a(15, MDItem.fNumber, .number, .numeric),
            a(16, MDItem.isoSpeed, .number, .numeric, integral: true),
            a(17, MDItem.focalLength, .number, .numeric),
            a(18, MDItem.latitude, .number, .numeric),
            a(19, MDItem.longitude, .number, .numeric),
            a(20, MDItem.altitude, .number, .numeric),
            a(21, MDItem.userTags, .strings, text, text: true),
            a(22, MDItem.title, .string, name, text: true),
            a(23, MDItem.keywords, .strings, text, text: true),
            a(24, MDItem.description, .string, .words, text: true),
            a(25, MDItem.authors, .strings, text),
            a(26, MDItem.comment, .string, .words, text: true),
            a(27, MDItem.displayName, .string, name, text: true),
            a(28, MDItem.bitsPerSample, .number, .numeric, integral: true),
            a(29, MDItem.colorSpace, .string, .values),
            a(30, MDItem.hasAlphaChannel, .number, .numeric, integral: true),
            a(31, MDItem.frameCount, .number, .numeric, integral: true),
            a(32, MDItem.lensModel, .string, [.values, .words]),
            a(33, MDItem.numberOfPages, .number, .numeric, integral: true),
            a(34, MDItem.pageWidth, .number, .numeric),
            a(35, MDItem.pageHeight, .number, .numeric),
            a(36, MDItem.creator, .string, text),
            a(37, MDItem.album, .string, text, text: true),
            a(38, MDItem.musicalGenre, .string, text),
            a(39, MDItem.recordingYear, .number, .numeric, integral: true),
            a(40, MDItem.audioTrackNumber, .number, .numeric, integral: true),
            a(41, MDItem.durationSeconds, .number, .numeric),
            a(42, MDItem.codecs, .strings, .values),
            a(43, MDItem.videoBitRate, .number, .numeric),
            a(44, MDItem.audioBitRate, .number, .numeric),
            a(45, MDItem.audioChannelCount, .number, .numeric, integral: true),
            a(46, MDItem.audioSampleRate, .number, .numeric),
            a(47, MDItem.fonts, .strings, text, text: true),
            a(48, MDItem.isMotionPhoto, .number, .numeric, integral: true),
            a(49, MDItem.motionPhotoVideoDurationSeconds, .number, .numeric),
            a(50, MDItem.motionPhotoPresentationSeconds, .number, .numeric),
            a(51, MDItem.livePhotoContentIdentifier, .string, .values),
        ]
    }()

    static let byName: [String: AttributeInfo] = Dictionary(uniqueKeysWithValues: builtIn.map { ($0.name, $0) })
    static let byID: [UInt16: AttributeInfo] = Dictionary(uniqueKeysWithValues: builtIn.map { ($0.id, $0) })
    /// `kMDItemPath`'s number: its lists are the ancestor directories.
    static let pathID = byName[MDItem.path]!.id
    static let fsNameID = byName[MDItem.fsName]!.id
    /// The attributes plain words search (name, title, keywords, description, tags, comment…).
    static let textAttributes = builtIn.filter { $0.isText && $0.policy.contains(.words) }

    /// Built-in attributes by number, for lookups without hashing.
    static let builtInTable: [AttributeInfo?] = {
        var t = [AttributeInfo?](repeating: nil, count: Int(firstDynamicID))
        for a in builtIn { t[Int(a.id)] = a }
        return t
    }()

    /// The index structures for an app attribute of `type`.
    static func dynamicPolicy(_ type: AttributeType) -> IndexPolicy {
        type.isText ? [.values, .words] : .numeric
    }

    /// Two types one attribute may hold: a string and a list of strings compare alike.
    static func compatible(_ a: AttributeType, _ b: AttributeType) -> Bool {
        a == b || (a.isText && b.isText)
    }
}
