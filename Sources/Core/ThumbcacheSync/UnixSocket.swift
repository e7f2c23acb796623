#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// A Unix stream socket's address, and a connection to one: the daemon's session socket, and the
/// private socket `serve` has Hummingbird listen on.
package enum UnixSocket {
    /// Whether `path` fits a socket address (`sun_path`, with its NUL).
    package static func fits(_ path: String) -> Bool {
        path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path)
    }

    /// `path` as a socket address, cut to what `sun_path` holds (callers check ``fits(_:)`` first).
    package static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A close-on-exec socket connected to `path`, or why not (`ECONNREFUSED`: nothing listens there).
    package static func connect(to path: String) -> Result<Int32, Errno> {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(.current) }
        var address = address(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in retryingInterrupts { Glibc.connect(fd, a, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        }
        if case .failure(let error) = rc {
            close(fd)
            return .failure(error)
        }
        return .success(fd)
    }
}
