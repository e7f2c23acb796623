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
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count: Int
            switch retryingInterrupts({ chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }) {
            case .success(let n): count = n
            case .failure(let errno): throw CommandFailure("--files-from \(source): cannot read: \(errno)")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        let separator: UInt8 = nulSeparated ? 0 : UInt8(ascii: "\n")
        return bytes.split(separator: separator).map { String(decoding: $0, as: UTF8.self) }
    }
}
