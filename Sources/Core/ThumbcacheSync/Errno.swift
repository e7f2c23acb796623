#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// One `Errno` for the whole API: swift-system's, which an app using `FilePath` already has (a
// copy of our own made `Errno` ambiguous in an app that imported both).
@_exported import struct SystemPackage.Errno

extension Errno {
    /// The calling thread's `errno`, read right after the call that failed.
    package static var current: Errno { Errno(rawValue: errno) }
}
