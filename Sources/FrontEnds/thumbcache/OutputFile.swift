import Glibc
import ThumbcacheSync

/// A result file (`writeFile`: no fsync), its failure as the command's error; `-` is standard
/// output, for a pipe.
enum OutputFile {
    static let standardOutput = "-"

    static func write(_ bytes: [UInt8], to path: String) throws {
        guard path == standardOutput else {
            if let errno = writeFile(bytes, to: path) { throw CommandFailure("cannot write \(path): \(errno)") }
            return
        }
        if let errno = bytes.withUnsafeBytes({ writeFully(STDOUT_FILENO, $0) }) {
            throw CommandFailure("cannot write the image to standard output: \(errno)")
        }
    }

    /// Why `path` cannot take an image now, if it cannot: standard output on a terminal would
    /// show the user a screenful of binary.
    static func refusal(_ path: String) -> String? {
        guard path == standardOutput, isatty(STDOUT_FILENO) == 1 else { return nil }
        return "standard output is a terminal: give -o FILE, or pipe the image into a program (-o - | …)"
    }
}
