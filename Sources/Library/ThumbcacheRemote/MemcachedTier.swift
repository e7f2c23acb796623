import CThumbcacheMemcached
import Glibc
import Synchronization
import ThumbcacheStore

/// A remote tier on memcached servers (a LAN's hot tier): keys spread over the servers by
/// consistent hashing, so a server that dies costs only its share of keys, as misses; after two
/// failures it is left out for 30 s. Memcached may evict anything at any time: a miss is never
/// an error. An object larger than the servers take (1 MB by default) is not stored, and not
/// retried.
package final class MemcachedTier: RemoteTier, @unchecked Sendable {
    // @unchecked Sendable: the handle is never replaced, and the shim pools its connections.
    private let handle: OpaquePointer
    /// Prefixes every key (memcached has one flat key space).
    package let namespace: String
    package let description: String
    /// Failed requests since the last answered one. One server of several that dies fails only
    /// the requests for its keys (until libmemcached leaves it out), and those are misses; only
    /// a run of failures with no answer between says every server is gone.
    private let failuresInARow = Atomic<Int>(0)
    static let outageAfter = 8

    /// - Parameters:
    ///   - servers: `host:port` of each server.
    ///   - timeout: seconds to connect and to wait for an answer.
    package init(servers: [String], namespace: String, timeout: Double = 0.5) throws(RemoteError) {
        description = "memcached://\(servers.joined(separator: ","))" + (namespace.isEmpty ? "" : "/\(namespace)")
        self.namespace = namespace
        var error = [CChar](repeating: 0, count: 256)
        guard let handle = tc_mc_create(servers.joined(separator: ","), Int(timeout * 1000), &error, error.count) else {
            throw RemoteError(remote: description, operation: "configure", reason: .invalidLocation(Self.message(error)))
        }
        self.handle = handle
    }

    deinit { tc_mc_destroy(handle) }

    /// The key of a thumbnail: memcached keys are at most 250 bytes without spaces.
    func key(_ key: ThumbnailKey) -> String {
        let variant = String(key.variant.fingerprint, radix: 16)
        return "\(namespace)\(RemoteLayout.version):\(key.content.hex):\(key.boxWidth)x\(key.boxHeight)-\(variant)"
    }

    package func fetch(_ keys: [ThumbnailKey]) -> [Result<[UInt8]?, RemoteError>] {
        switch getMany(keys.map(key)) {
        case .failure(let error):
            guard failed() else { return keys.map { _ in .success(nil) } }
            return keys.map { _ in .failure(RemoteError(remote: description, operation: "fetch", reason: .unreachable(error.message))) }
        case .success(let values):
            failuresInARow.store(0, ordering: .relaxed)
            return values.map { .success($0) }
        }
    }

    /// Why no server could be asked.
    struct Unanswered: Error {
        var message: String
    }

    /// One multi-get: each key's value or nil, or why no server could be asked.
    private func getMany(_ names: [String]) -> Result<[[UInt8]?], Unanswered> {
        var strings = names.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        let lengths = names.map { $0.utf8.count }
        var values = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: names.count)
        var sizes = [Int](repeating: 0, count: names.count)
        var error = [CChar](repeating: 0, count: 256)
        let rc = strings.withUnsafeMutableBufferPointer { k in
            k.withMemoryRebound(to: UnsafePointer<CChar>?.self) { k in
                tc_mc_get_many(handle, k.baseAddress, lengths, names.count, &values, &sizes, &error, error.count)
            }
        }
        defer { values.forEach { tc_mc_free($0) } }
        guard rc == 0 else { return .failure(Unanswered(message: Self.message(error))) }
        return .success(zip(values, sizes).map { value, size in value.map { Array(UnsafeBufferPointer(start: $0, count: size)) } })
    }

    package func store(_ objects: [(key: ThumbnailKey, object: [UInt8], contentType: String)]) -> [Result<Void, RemoteError>] {
        objects.map { item in
            var error = [CChar](repeating: 0, count: 256)
            let name = key(item.key)
            let rc = item.object.withUnsafeBufferPointer { tc_mc_set(handle, name, name.utf8.count, $0.baseAddress, $0.count, &error, error.count) }
            // Too large for the servers (1 = E2BIG): nothing to retry, so not a failure.
            if rc >= 0 {
                failuresInARow.store(0, ordering: .relaxed)
                return .success(())
            }
            _ = failed()
            return .failure(RemoteError(remote: description, operation: "upload", reason: .failed(Self.message(error))))
        }
    }

    /// Counts a failed request; true once the run of them says no server answers.
    private func failed() -> Bool {
        failuresInARow.add(1, ordering: .relaxed).newValue >= Self.outageAfter
    }

    /// Asks for keys no thumbnail has, spread over the servers: answered (as misses) when any
    /// server is up.
    package func check() -> Result<Void, RemoteError> {
        getMany((0..<16).map { namespace + "thumbcache-check-\($0)" }).map { _ in () }.mapError {
            RemoteError(remote: description, operation: "check", reason: .unreachable($0.message))
        }
    }

    /// The shim's NUL-terminated message in `buffer`.
    private static func message(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
