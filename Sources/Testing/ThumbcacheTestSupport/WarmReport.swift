import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What `thumbcache warm --json` reports, as the tests read it.
package struct WarmReport: Decodable {
    package var generated: Int
    package var failures: [String: [String]]

    /// The reason each failed path is listed under.
    package var reasons: [String: String] {
        var out: [String: String] = [:]
        for (reason, paths) in failures { for p in paths { out[p] = reason } }
        return out
    }
}

/// A TCP listener on loopback that nobody should reach.
package final class LoopbackListener {
    package let fd: Int32
    package let port: UInt16

    package init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        port = UInt16(bigEndian: address.sin_port)
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
    }

    deinit { close(fd) }

    /// True if a connection is waiting.
    package var wasReached: Bool {
        let c = accept(fd, nil, nil)
        if c >= 0 { close(c) }
        return c >= 0
    }
}
