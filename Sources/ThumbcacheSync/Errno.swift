#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX error number, with the C library's message as its description.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    public var description: String { String(cString: strerror(rawValue)) }

    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    public static let ioError = Errno(rawValue: EIO)
    public static let noSpaceLeft = Errno(rawValue: ENOSPC)

    public static func ~= (pattern: Errno, value: any Error) -> Bool { (value as? Errno) == pattern }
}
