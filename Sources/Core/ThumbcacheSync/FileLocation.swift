import SystemPackage

/// Where a file or directory is: a path `String`, a `file:` `URL` or a `FilePath`.
///
/// Public API that names a file takes `some FileLocation`, so an app passes what it has; the
/// cache and the index key files by their path string. `URL`'s conformance comes with the store,
/// the index and the library (ThumbcacheFileURL), not with the imaging core alone, which the
/// worker programs link without Foundation.
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
