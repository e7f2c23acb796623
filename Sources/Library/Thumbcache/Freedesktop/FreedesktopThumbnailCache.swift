import FoundationEssentials
import Glibc
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheSync

/// thumbcache's release, as the freedesktop standard's failure directory and PNG `Software` key name it.
package let thumbcacheVersion = thumbcacheVersionText.description
/// The same, in memory that lives as long as the program, for C's `thumbcache_version()`.
package let thumbcacheVersionText: StaticString = "0.9"

/// The thumbnail cache every Linux file manager reads (`$XDG_CACHE_HOME/thumbnails`), after the
/// freedesktop.org Thumbnail Managing Standard: one PNG per file and size, named by the MD5 of
/// the file's URI, carrying the file's URI, modification time and size in tEXt keys.
public struct FreedesktopThumbnailCache: Sendable, Hashable {
    /// The standard's size directories and the largest side of the thumbnails in each.
    public enum Size: String, CaseIterable, Sendable, Comparable, Codable {
        case normal
        case large
        case xLarge = "x-large"
        case xxLarge = "xx-large"

        public var pixels: Int {
            switch self {
            case .normal: 128
            case .large: 256
            case .xLarge: 512
            case .xxLarge: 1024
            }
        }

        public static func < (a: Size, b: Size) -> Bool { a.pixels < b.pixels }
    }

    /// What the standard's validity check compares: the file's URI, modification time (whole
    /// seconds) and size in bytes.
    package struct Source: Sendable, Hashable {
        package var uri: String
        package var modificationTime: Int64
        package var size: UInt64

        package init(uri: String, modificationTime: Int64, size: UInt64) {
            self.uri = uri
            self.modificationTime = modificationTime
            self.size = size
        }

        /// The file at `uri` as `snapshot` saw it.
        package init(uri: String, snapshot: FileSnapshot) {
            self.init(uri: uri, modificationTime: snapshot.modificationSeconds, size: snapshot.size)
        }

        /// The file at `path` as `snapshot` saw it.
        package init(path: String, snapshot: FileSnapshot) {
            self.init(uri: FileURI.of(path: path), snapshot: snapshot)
        }
    }

    /// The cache's root: `$XDG_CACHE_HOME/thumbnails` unless given.
    public let directory: String

    public init(directory: String = FreedesktopThumbnailCache.defaultDirectory) {
        self.directory = directory
    }

    public static var defaultDirectory: String { FilePaths.cacheHome + "/thumbnails" }

    /// Where thumbcache records files it could not make a thumbnail of.
    package var failureDirectory: String { directory + "/fail/thumbcache-" + thumbcacheVersion }

    /// The thumbnail's file name: the MD5 of the URI in hex, then `.png`.
    package static func name(forURI uri: String) -> String { MD5.hex(Array(uri.utf8)) + ".png" }

    package func path(forURI uri: String, size: Size) -> String { directory + "/" + size.rawValue + "/" + Self.name(forURI: uri) }

    package func failurePath(forURI uri: String) -> String { failureDirectory + "/" + Self.name(forURI: uri) }

    /// Whether the PNG at `thumbnail` is a valid thumbnail of `source` as the standard checks it:
    /// its `Thumb::URI` and `Thumb::MTime` equal the file's, and its `Thumb::Size` too if it has one.
    package static func isValid(thumbnailAt thumbnail: String, for source: Source) -> Bool {
        guard let keys = PNGText.read(path: thumbnail) else { return false }
        return matches(keys, source)
    }

    static func matches(_ keys: [String: String], _ source: Source) -> Bool {
        guard keys["Thumb::URI"] == source.uri, keys["Thumb::MTime"].flatMap({ Int64($0) }) == source.modificationTime else { return false }
        if let size = keys["Thumb::Size"] { return UInt64(size) == source.size }
        return true
    }

    /// Writes `image` (already within `size`'s box) as `source`'s thumbnail: an 8-bit RGBA PNG with
    /// the standard's keys and `extraKeys`, written to a temporary file and renamed over the old one,
    /// mode 0600 in 0700 directories.
    package func write(_ image: RGBAImage, for source: Source, size: Size, mimeType: String?, extraKeys: [(key: String, value: String)] = []) throws {
        var keys: [(key: String, value: String)] = [("Thumb::URI", source.uri), ("Thumb::MTime", String(source.modificationTime)),
                                                    ("Thumb::Size", String(source.size))]
        if let mimeType { keys.append(("Thumb::Mimetype", mimeType)) }
        keys += extraKeys
        keys.append(("Software", "thumbcache " + thumbcacheVersion))
        let bytes = try ImageEncoder.png(image, text: keys, alwaysRGBA: true)
        try Self.writeAtomically(bytes, to: path(forURI: source.uri, size: size))
    }

    /// Records that thumbcache could not make a thumbnail of `source` (`fail/thumbcache-VERSION/`):
    /// a 1×1 transparent PNG with the URI and modification time, as GNOME writes them.
    package func writeFailure(for source: Source) throws {
        let pixel = RGBAImage(width: 1, height: 1, pixels: [0, 0, 0, 0], hasAlpha: true)
        let keys: [(key: String, value: String)] = [("Thumb::URI", source.uri), ("Thumb::MTime", String(source.modificationTime)),
                                                    ("Software", "thumbcache " + thumbcacheVersion)]
        try Self.writeAtomically(try ImageEncoder.png(pixel, text: keys), to: failurePath(forURI: source.uri))
    }

    /// Creates `directory` and its parents as 0700 where missing.
    static func makeDirectory(_ directory: String) throws {
        if FilePaths.isDirectory(directory) { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// A temporary file beside `path`, then a rename: a reader sees the old thumbnail or the new one, never half of one.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let directory = FilePaths.parent(path)
        try makeDirectory(directory)
        let temporary = directory + "/.thumbcache-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).png"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FreedesktopError(path: temporary, reason: .system(operation: "create", Errno.current)) }
        let writeError = bytes.withUnsafeBytes { writeFully(fd, $0) }
        close(fd)
        guard writeError == nil, rename(temporary, path) == 0 else {
            let reason = writeError.map { FreedesktopError.Reason.system(operation: "write", $0) } ?? .system(operation: "rename", Errno.current)
            unlink(temporary)
            throw FreedesktopError(path: path, reason: reason)
        }
    }
}

/// A standard thumbnail that could not be written or read, and why.
package struct FreedesktopError: Error, Sendable, CustomStringConvertible {
    package enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// A system call failed: which, and its error.
        case system(operation: String, Errno)
        /// The store holds no thumbnail of the file large enough to make the standard size from.
        case noLargeEnoughThumbnail(size: String, pixels: Int)
        /// The stored thumbnail was removed (by a compaction or eviction) while it was read.
        case storedThumbnailGone

        package var description: String {
            switch self {
            case .system(let operation, let errno): "cannot \(operation): \(errno)"
            case .noLargeEnoughThumbnail(let size, let pixels): "no stored thumbnail of \(pixels) px or more to make the \(size) one from"
            case .storedThumbnailGone: "its stored thumbnail went away"
            }
        }
    }

    package var path: String
    package var reason: Reason

    package var description: String { "\(path): \(reason)" }
}
