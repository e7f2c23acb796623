import Hummingbird
import Thumbcache

/// A request refused or failed: its HTTP status and what the client is told. The message never
/// names a path outside the served folders and never carries a stack or an internal error.
package struct ServeError: Error, Sendable, CustomStringConvertible {
    package var status: HTTPResponse.Status
    package var message: String

    package init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    package var description: String { "\(status.code) \(message)" }

    static func badRequest(_ message: String) -> ServeError { ServeError(.badRequest, message) }
    static func notFound(_ message: String) -> ServeError { ServeError(.notFound, message) }
    static let outsideRoots = ServeError(.forbidden, "outside the served folders")

    /// `{"error": …, "status": …}`.
    func json(_ o: inout JSONText) {
        o.member("error", message)
        o.member("status", status.code)
    }
}
