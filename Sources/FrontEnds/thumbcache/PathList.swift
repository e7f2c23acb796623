import Glibc
import ThumbcacheSync

/// Paths listed one a line, or separated by NUL bytes as `find -print0` writes them, in a file or
/// on standard input (`-`): what `warm --files-from` reads.
enum PathList {
    /// The paths `source` lists, empty lines left out.
    static func read(_ source: String, nulSeparated: Bool) throws(CommandFailure) -> [String] {
        let fromStandardInput = source == PipedInput.standardInput
        if fromStandardInput && isatty(STDIN_FILENO) == 1 {
            throw CommandFailure("--files-from -: standard input is a terminal: pipe the list into it (find … -print0 | thumbcache warm --files-from - --null)")
        }
        let fd = fromStandardInput ? STDIN_FILENO : open(source, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure("--files-from \(source): cannot open: \(Errno.current)") }
        defer { if !fromStandardInput { close(fd) } }
        var bytes: [UInt8] = []
        try PipedInput.readToEnd(fd, name: "--files-from \(source)") { bytes.append(contentsOf: $0) }
        let separator: UInt8 = nulSeparated ? 0 : UInt8(ascii: "\n")
        return bytes.split(separator: separator).map { String(decoding: $0, as: UTF8.self) }
    }
}
