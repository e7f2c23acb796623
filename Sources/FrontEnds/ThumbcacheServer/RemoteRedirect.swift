import Thumbcache

/// Where `serve` sends a client for a thumbnail the remote tier holds, so that one small server
/// fronts a fleet while the object store (or a CDN before it) sends the bytes.
package struct RemoteRedirect: Sendable {
    package enum Target: Sendable, Hashable {
        /// A public address of the bucket or of a CDN before it: `BASE/OBJECT-NAME`.
        case base(String)
        /// A presigned URL, valid for this many seconds.
        case presigned(expires: Int)
    }

    let remote: RemoteCache
    let tier: S3Tier
    package let target: Target

    /// Nil unless the remote is an S3 bucket (memcached has no address a browser could use).
    package init?(remote: RemoteCache, target: Target) {
        guard let tier = remote.tier as? S3Tier else { return nil }
        self.remote = remote
        self.tier = tier
        self.target = target
    }

    /// The address and how long a client may keep the redirect, if the remote holds `key`.
    /// Blocks for one look-up the first time a key is asked for.
    func location(for key: ThumbnailKey) -> (url: String, maxAge: Int)? {
        guard remote.holds(key) else { return nil }
        switch target {
        case .base(let base):
            // The object never changes: the redirect is as lasting as the URL that led to it.
            let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
            return (trimmed + "/" + tier.objectName(for: key), 31_536_000)
        case .presigned(let expires):
            // Kept by clients for at most half the signature's life, so it is valid when used.
            return (tier.presignedURL(for: key, expires: expires), expires / 2)
        }
    }
}
