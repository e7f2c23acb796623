import FoundationEssentials
import Synchronization
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheSync

/// The remote tier as the pipeline uses it: faults are misses, never errors.
///
/// What comes back is checked (``RemoteThumbnail/parse(_:for:)``) before anything keeps or
/// serves it; a corrupt or foreign object is skipped with one warning. A remote that stops
/// answering costs one short timeout, then a circuit breaker stops asking for ``cooldown``
/// seconds and the caller decodes locally; the warning says so once, not per file.
public final class RemoteCache: Sendable {
    package let tier: any RemoteTier
    /// Which locally made thumbnails are worth uploading.
    public let uploadPolicy: UploadPolicy
    /// Seconds the breaker stays open after an outage before one request tries again.
    public let cooldown: Double
    private let warn: @Sendable (String) -> Void
    private let state = Mutex(State())
    private let presence = Mutex(Presence())

    /// Keys known to be stored remotely (fetched, uploaded, or found by a look-up), and those
    /// found missing lately: an object never changes, so a key once there stays known.
    private struct Presence {
        var present: Set<ThumbnailKey> = []
        var order: [ThumbnailKey] = []
        var missing: [ThumbnailKey: UInt64] = [:]

        mutating func insert(_ key: ThumbnailKey) {
            guard present.insert(key).inserted else { return }
            order.append(key)
            missing[key] = nil
            // Bounded: the oldest are forgotten (and looked up again if asked for).
            if order.count > RemoteCache.presenceMemory {
                present.subtract(order.prefix(order.count / 2))
                order.removeFirst(order.count / 2)
            }
        }
    }

    static let presenceMemory = 1 << 16
    /// Seconds a key found missing is not looked up again.
    static let missingFor: Double = 60

    private struct State {
        var openUntil: UInt64 = 0
        var consecutiveFailures = 0
        var warnedOutage = false
        var warnedCorrupt = false
        var stats = RemoteStatistics()
    }

    /// Failures in a row (of any kind) that open the breaker; an outage opens it at once.
    static let failuresToOpen = 3

    /// - Parameter warnings: receives the few messages a user should see (an outage, a corrupt
    ///   object), once each.
    package init(tier: any RemoteTier, uploadPolicy: UploadPolicy = .default, cooldown: Double = 30,
                warnings: @escaping @Sendable (String) -> Void = { _ in }) {
        self.tier = tier
        self.uploadPolicy = uploadPolicy
        self.cooldown = cooldown
        self.warn = warnings
    }

    /// Opens the remote a URL names: `s3://BUCKET/PREFIX` (credentials, region and endpoint
    /// from the environment and `~/.aws`, as the AWS tools find them), or
    /// `memcached://HOST:PORT,HOST:PORT/NAMESPACE`.
    public static func open(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                            uploadPolicy: UploadPolicy = .default, warnings: @escaping @Sendable (String) -> Void = { _ in })
        throws(RemoteError) -> RemoteCache
    {
        try RemoteCache(tier: RemoteLocation.tier(for: url, environment: environment), uploadPolicy: uploadPolicy, warnings: warnings)
    }

    /// Checks once that the remote can be used; wrong credentials, a missing bucket or an address
    /// thumbcache cannot use are an error the caller shows at start. A remote that does not
    /// answer, or answers with a failure of its own (an S3 service's 500 or 503 after the
    /// retries), is not: it is reported as a warning and the breaker opens, as it would later.
    public func check() throws(RemoteError) {
        switch tier.check() {
        case .success: succeeded()
        case .failure(let e):
            switch e.reason {
            case .denied, .missing, .invalidLocation: throw e
            // At the start the one answer there is decides: the breaker opens at once, and says so.
            case .unreachable, .failed, .corruptObject: failed(e, isOutage: true)
            }
        }
    }

    /// False while the breaker is open.
    package var isAvailable: Bool {
        state.withLock { $0.openUntil <= MonotonicClock.nanoseconds() }
    }

    public var statistics: RemoteStatistics { state.withLock { $0.stats } }

    /// The thumbnails stored for `keys` that pass every check, with their pixels; nil for a miss,
    /// a rejected object, or a remote that is not answering.
    package func fetch(_ keys: [ThumbnailKey]) -> [(RemoteThumbnail, RGBAImage)?] {
        guard !keys.isEmpty, isAvailable else { return keys.map { _ in nil } }
        let answers = tier.fetch(keys)
        var found: [(RemoteThumbnail, RGBAImage)?] = []
        var outage: RemoteError?
        for (key, answer) in zip(keys, answers) {
            switch answer {
            case .success(nil):
                state.withLock { $0.stats.misses += 1 }
                found.append(nil)
            case .success(let object?):
                do {
                    let parsed = try RemoteThumbnail.parse(object, for: key)
                    presence.withLock { $0.insert(key) }
                    state.withLock {
                        $0.stats.fetched += 1
                        $0.stats.bytesFetched += object.count
                        $0.stats.thumbnailBytesFetched += parsed.0.data.count
                    }
                    found.append(parsed)
                } catch {
                    rejected(RemoteError(remote: tier.description, operation: "fetch of \(key)", reason: error))
                    found.append(nil)
                }
            case .failure(let e):
                state.withLock {
                    $0.stats.errors += 1
                    if $0.stats.firstError == nil { $0.stats.firstError = e.description }
                }
                if outage == nil { outage = e }
                found.append(nil)
            }
        }
        // A remote that answered some keys is up (a memcached server of several may be gone).
        if let outage, answers.allSatisfy({ if case .failure = $0 { true } else { false } }) { failed(outage) } else { succeeded() }
        return found
    }

    /// Uploads objects (``RemoteThumbnail/object()``); returns which succeeded. Skipped (all
    /// false) while the breaker is open.
    package func upload(_ objects: [(key: ThumbnailKey, object: [UInt8])]) -> [Bool] {
        guard !objects.isEmpty, isAvailable else { return objects.map { _ in false } }
        let results = tier.store(objects.map { ($0.key, $0.object, "image/png") })
        var firstFailure: RemoteError?
        var sent = 0
        for case .failure(let e) in results where firstFailure == nil { firstFailure = e }
        for (object, result) in zip(objects, results) {
            if case .success = result { sent += object.object.count }
        }
        let ok = results.map { if case .success = $0 { true } else { false } }
        presence.withLock { p in for (object, sent) in zip(objects, ok) where sent { p.insert(object.key) } }
        state.withLock {
            $0.stats.uploaded += ok.filter { $0 }.count
            $0.stats.bytesUploaded += sent
            $0.stats.errors += results.count - ok.filter { $0 }.count
            if $0.stats.firstError == nil, let firstFailure { $0.stats.firstError = firstFailure.description }
        }
        if let firstFailure, !ok.contains(true) { failed(firstFailure) } else { succeeded() }
        return ok
    }

    /// Whether the remote holds `key`: from memory when this process fetched, uploaded or
    /// looked it up before, else by one look-up (none while the breaker is open).
    package func holds(_ key: ThumbnailKey) -> Bool {
        let now = MonotonicClock.nanoseconds()
        let known = presence.withLock { p -> Bool? in
            if p.present.contains(key) { return true }
            if let until = p.missing[key], until > now { return false }
            return nil
        }
        if let known { return known }
        guard isAvailable, let answer = tier.contains([key]).first else { return false }
        switch answer {
        case .success(true):
            presence.withLock { $0.insert(key) }
            succeeded()
            return true
        case .success(false):
            presence.withLock { p in
                if p.missing.count > Self.presenceMemory { p.missing = p.missing.filter { $0.value > now } }
                p.missing[key] = now + UInt64(Self.missingFor * 1e9)
            }
            succeeded()
            return false
        case .failure(let e):
            failed(e)
            return false
        }
    }

    private func succeeded() {
        state.withLock {
            $0.consecutiveFailures = 0
            $0.openUntil = 0
        }
    }

    private func failed(_ error: RemoteError, isOutage: Bool = false) {
        let message = state.withLock { s -> String? in
            s.consecutiveFailures += 1
            guard isOutage || error.reason.isOutage || s.consecutiveFailures >= Self.failuresToOpen else { return nil }
            s.openUntil = MonotonicClock.nanoseconds() + UInt64(cooldown * 1e9)
            s.stats.outages += 1
            if s.stats.unavailable == nil { s.stats.unavailable = error.description }
            guard !s.warnedOutage else { return nil }
            s.warnedOutage = true
            return "remote \(tier.description) is unavailable (\(error.reason)); decoding locally, uploads stay queued"
        }
        if let message { warn(message) }
    }

    private func rejected(_ error: RemoteError) {
        let first = state.withLock { s -> Bool in
            s.stats.rejected += 1
            defer { s.warnedCorrupt = true }
            return !s.warnedCorrupt
        }
        if first { warn("skipped a remote object that is not a valid thumbnail (\(error)); further ones are counted, not listed") }
    }
}

/// What a remote tier did for one process.
public struct RemoteStatistics: Sendable, Codable, Hashable {
    /// Thumbnails fetched and accepted.
    public var fetched = 0
    /// Bytes of the objects fetched and accepted…
    public var bytesFetched = 0
    /// …and of the thumbnails in them, as stored: the rest is what the remote tier added.
    public var thumbnailBytesFetched = 0
    /// Keys the remote did not have.
    public var misses = 0
    /// Objects fetched and refused as not valid.
    public var rejected = 0
    public var uploaded = 0
    public var bytesUploaded = 0
    /// Requests that failed.
    public var errors = 0
    /// Times the breaker opened.
    public var outages = 0
    /// The first outage's reason, if there was one.
    public var unavailable: String?
    /// The first failed request's reason, if one failed.
    public var firstError: String?

    /// Zeros, counted up by the cache: an app reads statistics, it does not make them.
    package init() {}
}

/// Which thumbnails are uploaded: those of sources large enough that fetching the thumbnail is
/// worth more than decoding the source. iCloud leaves common types under 1 MB out, for the
/// internet's latency; on a LAN a fetch costs less than any decode down to a few tens of KB,
/// so the default line is 32 KiB (Docs/PERFORMANCE.md, "Remote tier").
public struct UploadPolicy: Sendable, Hashable {
    /// Sources of the common types below this many bytes are not uploaded.
    public var minimumSourceBytes: Int64
    /// The types the minimum applies to; any other type's thumbnail is always uploaded
    /// (a video's frame or a PDF's page costs more than its size suggests).
    public var commonTypes: Set<String>

    public init(minimumSourceBytes: Int64, commonTypes: Set<String> = UploadPolicy.commonImageTypes) {
        self.minimumSourceBytes = minimumSourceBytes
        self.commonTypes = commonTypes
    }

    public static let commonImageTypes: Set<String> = ["public.png", "public.jpeg", "com.compuserve.gif", "org.webmproject.webp", "com.microsoft.bmp"]

    public static let `default` = UploadPolicy(minimumSourceBytes: 32 << 10)
    /// Every thumbnail made goes up.
    public static let everything = UploadPolicy(minimumSourceBytes: 0)

    package func shouldUpload(sourceBytes: Int64, type: String) -> Bool {
        sourceBytes >= minimumSourceBytes || !commonTypes.contains(type)
    }
}

/// Remote addresses: `s3://BUCKET[/PREFIX]`, `memcached://HOST[:PORT][,HOST[:PORT]…][/NAMESPACE]`.
enum RemoteLocation {
    static func tier(for url: String, environment: [String: String]) throws(RemoteError) -> any RemoteTier {
        guard let schemeEnd = url.firstRange(of: "://") else {
            throw RemoteError(remote: url, operation: "configure", reason: .invalidLocation("expected s3://BUCKET/PREFIX"))
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        let rest = url[schemeEnd.upperBound...]
        switch scheme {
        case "s3":
            let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let bucket = String(parts.first ?? "")
            guard Self.isBucketName(bucket) else {
                throw RemoteError(remote: url, operation: "configure", reason: .invalidLocation("'\(bucket)' is not a bucket name"))
            }
            let prefix = parts.count > 1 ? String(parts[1]) : ""
            let configuration = AWSConfiguration.load(environment: environment)
            let addressing = environment["THUMBCACHE_S3_ADDRESSING"].map { $0 == "path" }
            return try S3Tier(bucket: bucket, prefix: prefix, configuration: configuration, pathStyle: addressing)
        case "memcached":
            let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let servers = (parts.first ?? "").split(separator: ",").map { $0.contains(":") ? String($0) : "\($0):11211" }
            guard !servers.isEmpty, servers.allSatisfy({ !$0.hasPrefix(":") }) else {
                throw RemoteError(remote: url, operation: "configure", reason: .invalidLocation("expected memcached://HOST[:PORT][,HOST[:PORT]…][/NAMESPACE]"))
            }
            let namespace = parts.count > 1 && !parts[1].isEmpty ? String(parts[1]) + ":" : ""
            return try MemcachedTier(servers: servers, namespace: namespace)
        default:
            throw RemoteError(remote: url, operation: "configure",
                              reason: .invalidLocation("unknown scheme '\(scheme)'; expected s3://BUCKET/PREFIX or memcached://HOST:PORT,…"))
        }
    }

    /// S3's rule: 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with
    /// a letter or digit.
    static func isBucketName(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alnum(_ b: UInt8) -> Bool { (0x61...0x7A).contains(b) || (0x30...0x39).contains(b) }
        return alnum(bytes.first!) && alnum(bytes.last!) && bytes.allSatisfy { alnum($0) || $0 == 0x2E || $0 == 0x2D }
    }
}
