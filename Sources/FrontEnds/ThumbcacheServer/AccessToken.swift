import Glibc
import ThumbcacheStore
import ThumbcacheSync

/// The secret a client shows to write, and to read at all when the server listens beyond
/// loopback: 256 random bits, kept 0600 in the cache directory so it survives restarts.
package enum AccessToken {
    package static let fileName = "serve-token"

    /// The token in `directory`, made now if there is none (or the file is unreadable, malformed
    /// or readable by others, in which case it may have leaked).
    package static func loadOrCreate(directory: String) throws(FileError) -> String {
        let path = directory + "/" + fileName
        if let token = existing(path) { return token }
        unlink(path)
        var generator = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in hex(generator.next()) }.joined()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .failure("create", Errno(rawValue: errno), path: path) }
        defer { close(fd) }
        let bytes = Array((token + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw .failure("write", Errno(rawValue: errno), path: path) }
        return token
    }

    /// True if `candidate` is the token, compared in time independent of where they differ.
    package static func matches(_ candidate: some StringProtocol, _ token: String) -> Bool {
        let a = Array(candidate.utf8), b = Array(token.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    private static func existing(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o077 == 0, st.st_uid == getuid() else { return nil }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace()
        guard text.utf8.count == 64, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        return text
    }

    private static func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
