#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif
import ThumbcacheSync

// A module of its own, so that ThumbcacheSync, which every worker links, links no Foundation:
// the conformance alone pulled FoundationEssentials into each worker program (8 MB of its 28).
// The store, the index and the library export it; the imaging core takes paths and `FilePath`s.
extension URL: FileLocation {
    /// The URL's path, percent-decoded. Only `file:` URLs name local files; any other URL's path
    /// is taken as it is and will not be found.
    public var fileSystemPath: String { path(percentEncoded: false) }
}
