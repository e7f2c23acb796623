import ThumbcacheStore

/// A shared store of thumbnails behind the local cache, keyed by content: what one machine makes,
/// every machine can fetch instead of decoding, and no key ever needs invalidating.
///
/// A backend moves opaque objects (``RemoteThumbnail/object()``) by ``ThumbnailKey``; checking
/// what comes back, counting, and turning faults into misses are ``RemoteCache``'s work.
/// Calls block: they run on the warm's and the uploader's own threads.
package protocol RemoteTier: Sendable, CustomStringConvertible {
    /// The objects stored under `keys`, in order: nil for a key that has none.
    func fetch(_ keys: [ThumbnailKey]) -> [Result<[UInt8]?, RemoteError>]
    /// Stores each object under its key (an object is immutable: storing it again is harmless).
    func store(_ objects: [(key: ThumbnailKey, object: [UInt8], contentType: String)]) -> [Result<Void, RemoteError>]
    /// Asks once whether the remote can be used at all: reachable, credentials accepted, the
    /// bucket or servers present.
    func check() -> Result<Void, RemoteError>
    /// Whether an object is stored under each key (without its bytes where the backend can).
    func contains(_ keys: [ThumbnailKey]) -> [Result<Bool, RemoteError>]
}

extension RemoteTier {
    package func contains(_ keys: [ThumbnailKey]) -> [Result<Bool, RemoteError>] {
        fetch(keys).map { $0.map { $0 != nil } }
    }
}

/// Why a remote tier could not be used.
public struct RemoteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The remote, as configured (never its credentials).
    public var remote: String
    /// What was being done ("fetch", "upload", "check").
    public var operation: String
    public var reason: Reason

    public enum Reason: Error, Sendable, Hashable, CustomStringConvertible {
        /// The address is not one thumbcache understands.
        case invalidLocation(String)
        /// No connection could be made, or none answered in time.
        case unreachable(String)
        /// The credentials were refused, or are missing.
        case denied(String)
        /// The bucket (or the servers) named do not exist.
        case missing(String)
        /// The service answered with an error.
        case failed(String)
        /// What came back is not a thumbnail for the key asked for; it is skipped, never served.
        case corruptObject(String)

        public var description: String {
            switch self {
            case .invalidLocation(let s): "not a remote thumbcache can use: \(s)"
            case .unreachable(let s): "unreachable: \(s)"
            case .denied(let s): "access denied: \(s)"
            case .missing(let s): "not found: \(s)"
            case .failed(let s): "failed: \(s)"
            case .corruptObject(let s): "not a valid thumbnail object: \(s)"
            }
        }

        /// The remote as a whole will not answer this process: down, or refusing its credentials
        /// or its bucket (which no retry of the next request mends). Stop asking for a while.
        var isOutage: Bool {
            switch self {
            case .unreachable, .denied, .missing: true
            default: false
            }
        }
    }

    package init(remote: String, operation: String, reason: Reason) {
        self.remote = remote
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "\(remote): \(operation) \(reason)" }
}

/// Where remote objects live under a prefix: `PREFIX/tc1/AB/HASH/WxH-VARIANT.png`, the first
/// byte of the hash first so that keys spread over a store's partitions (Docs/FORMAT.md).
package enum RemoteLayout {
    /// Bumped when the object format or the layout changes; part of every key.
    package static let version = "tc1"

    package static func objectName(for key: ThumbnailKey, prefix: String) -> String {
        let hex = key.content.hex
        let variant = String(key.variant.fingerprint, radix: 16)
        let padded = String(repeating: "0", count: 16 - variant.count) + variant
        return "\(prefix)\(version)/\(hex.prefix(2))/\(hex)/\(key.boxWidth)x\(key.boxHeight)-\(padded).png"
    }
}
