import ThumbcacheStore

/// A remote tier in an S3-compatible bucket (AWS, Ceph, SeaweedFS, MinIO, Garage, R2).
package final class S3Tier: RemoteTier {
    let client: S3Client
    /// Empty, or ending in `/`.
    package let prefix: String
    package let description: String

    /// - Parameters:
    ///   - bucket: the bucket's name.
    ///   - prefix: where under the bucket thumbcache's objects go.
    ///   - configuration: credentials, region and endpoint (``AWSConfiguration/load(environment:)``).
    package init(bucket: String, prefix: String, configuration: AWSConfiguration, pathStyle: Bool? = nil,
                 connectTimeout: Double = 1) throws(RemoteError) {
        let normalized = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        description = "s3://\(bucket)/\(normalized)"
        do {
            client = try S3Client(bucket: bucket, configuration: configuration, pathStyle: pathStyle, connectTimeout: connectTimeout)
        } catch {
            throw RemoteError(remote: description, operation: "configure", reason: .invalidLocation(error.message))
        }
        self.prefix = normalized
    }

    package func objectName(for key: ThumbnailKey) -> String { RemoteLayout.objectName(for: key, prefix: prefix) }

    /// An address anyone may fetch the object from until `expires` seconds from now.
    package func presignedURL(for key: ThumbnailKey, expires: Int) -> String {
        client.presignedURL(forKey: objectName(for: key), expires: expires)
    }

    package func fetch(_ keys: [ThumbnailKey]) -> [Result<[UInt8]?, RemoteError>] {
        client.get(keys.map(objectName(for:)), maxBody: RemoteThumbnail.maxObjectSize).map { r in
            r.mapError { error("fetch", $0) }
        }
    }

    package func store(_ objects: [(key: ThumbnailKey, object: [UInt8], contentType: String)]) -> [Result<Void, RemoteError>] {
        client.put(objects.map { (objectName(for: $0.key), $0.object, $0.contentType, ["thumbcache-layout": RemoteLayout.version]) }).map { r in
            r.mapError { error("upload", $0) }
        }
    }

    package func contains(_ keys: [ThumbnailKey]) -> [Result<Bool, RemoteError>] {
        client.head(keys.map(objectName(for:))).map { r in r.map { $0 != nil }.mapError { error("look-up", $0) } }
    }

    package func check() -> Result<Void, RemoteError> {
        client.list(prefix: prefix, maxKeys: 1).map { _ in () }.mapError { error("check", $0) }
    }

    func error(_ operation: String, _ failure: S3Failure) -> RemoteError {
        let reason: RemoteError.Reason = switch (failure.status, failure.code) {
        case (0, _): .unreachable(failure.message)
        case (_, "NoSuchBucket"): .missing("no bucket '\(client.bucket)' (\(failure))")
        case (403, _), (401, _), (_, "InvalidAccessKeyId"), (_, "SignatureDoesNotMatch"), (_, "AccessDenied"):
            .denied(failure.description + (client.signer == nil ? "; no credentials were found (AWS_ACCESS_KEY_ID, AWS_PROFILE)" : ""))
        default: .failed(failure.description)
        }
        return RemoteError(remote: description, operation: operation, reason: reason)
    }
}
