#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SystemPackage

/// Where a file or directory is: a path `String`, a `file:` `URL` or a `FilePath`.
///
/// Public API that names a file takes `some FileLocation`, so an app passes what it has; the
/// cache and the index key files by their path string.
public protocol FileLocation: Sendable {
    /// The location as a file system path.
    var fileSystemPath: String { get }
}

extension String: FileLocation {
    public var fileSystemPath: String { self }
}

extension Substring: FileLocation {
    public var fileSystemPath: String { String(self) }
}

extension FilePath: FileLocation {
    public var fileSystemPath: String { string }
}

extension URL: FileLocation {
    /// The URL's path, percent-decoded. Only `file:` URLs name local files; any other URL's path
    /// is taken as it is and will not be found.
    public var fileSystemPath: String { path(percentEncoded: false) }
}
