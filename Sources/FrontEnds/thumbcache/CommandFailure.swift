import FoundationEssentials
import Glibc

/// A failure to report as "Error: …" without the usage text (which ValidationError adds).
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A file operation's failure in words: the system's reason under a Foundation file error
/// ("No such file or directory"), else the error's own description.
func reason(_ error: any Error) -> String {
    let posix = (error as? POSIXError) ?? ((error as? CocoaError)?.userInfo["NSUnderlyingError"] as? POSIXError)
    return posix.map { String(cString: strerror($0.code.rawValue)) } ?? "\(error)"
}
