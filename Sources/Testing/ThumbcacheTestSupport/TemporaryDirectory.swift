import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it
/// when the value is released.
package final class TemporaryDirectory: Sendable {
    package let path: String

    package init(prefix: String = "thumbcache-test") {
        var base = NSTemporaryDirectory()
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/\(prefix)-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            fatalError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `path/name`.
    package func appending(_ name: String) -> String { path + "/" + name }

    /// Writes `bytes` to `path/name` and returns the full path.
    @discardableResult
    package func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let full = appending(name)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        return full
    }
}
