import ThumbcacheSync

/// A result file (`writeFile`: no fsync), its failure as the command's error.
enum OutputFile {
    static func write(_ bytes: [UInt8], to path: String) throws {
        if let errno = writeFile(bytes, to: path) { throw CommandFailure("cannot write \(path): \(errno)") }
    }
}
