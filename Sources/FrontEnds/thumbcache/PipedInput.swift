import CThumbcacheDescriptors
import Glibc
import ThumbcacheSync

/// An input file argument that is not a file a decoder can seek in: `-` (standard input) or a
/// pipe given by name (a shell's `<(…)`, a FIFO). Its bytes are copied into an anonymous memory
/// file, which decoders then read as any file by its `/proc/self/fd` path.
struct PipedInput {
    /// The most a pipe may bring: past it, the input should be a file (a video read from a pipe
    /// would otherwise take its whole length in memory).
    static let limit = 256 << 20

    /// The argument that names standard input.
    static let standardInput = "-"

    /// The memory file holding the bytes, open for this process's life.
    let descriptor: Int32
    /// What messages call the input: "standard input", or the pipe's path.
    let name: String

    /// The path decoders open.
    var path: String { "/proc/self/fd/\(descriptor)" }

    /// The piped input `argument` names; nil for anything else (a regular file's path, or a
    /// path that does not exist, which the usual way reports).
    static func open(_ argument: String) throws(CommandFailure) -> PipedInput? {
        let named = argument != standardInput
        let name = named ? argument : "standard input"
        var status = stat()
        guard (named ? stat(argument, &status) : fstat(STDIN_FILENO, &status)) == 0 else {
            if named { return nil }
            throw CommandFailure("standard input is closed: pipe or redirect a file into it")
        }
        switch status.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: break
        case S_IFREG where !named:
            // A file redirected in (`< photo.jpg`): read in place, not copied.
            return PipedInput(descriptor: STDIN_FILENO, name: name)
        case _ where !named && isatty(STDIN_FILENO) == 1:
            throw CommandFailure("standard input is a terminal: pipe or redirect a file into it (thumbcache thumbnail - -o out.png < photo.jpg)")
        case let mode where !named:
            throw CommandFailure("standard input is not a file or a pipe (a \(mode == S_IFCHR ? "character device" : mode == S_IFDIR ? "directory" : "device"))")
        default:
            return nil
        }
        let source = named ? Glibc.open(argument, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : STDIN_FILENO
        guard source >= 0 else { throw CommandFailure("\(name): cannot open: \(Errno.current)") }
        defer { if named { Glibc.close(source) } }
        // Opened without waiting for a writer; reads then wait for one's bytes, and a pipe that
        // no one holds open reads as empty instead of hanging.
        _ = fcntl(source, F_SETFL, fcntl(source, F_GETFL) & ~O_NONBLOCK)
        let copy = cdesc_memfd("thumbcache-input")
        guard copy >= 0 else { throw CommandFailure("\(name): cannot make a memory file for it: \(Errno.current)") }
        do throws(CommandFailure) {
            try Self.drain(source, into: copy, name: name)
        } catch {
            Glibc.close(copy)
            throw error
        }
        return PipedInput(descriptor: copy, name: name)
    }

    /// Copies `source` to its end into `copy`, failing past ``limit``.
    private static func drain(_ source: Int32, into copy: Int32, name: String) throws(CommandFailure) {
        var total = 0
        try readToEnd(source, name: name) { (bytes) throws(CommandFailure) in
            total += bytes.count
            guard total <= limit else {
                throw CommandFailure("\(name): more than \(limit >> 20) MiB came through the pipe: save it to a file and give its path")
            }
            if let errno = writeFully(copy, bytes) { throw CommandFailure("\(name): cannot hold its bytes in memory: \(errno)") }
        }
    }

    /// Reads `source` to its end, handing each piece read to `body`; `name` says what it is in errors.
    static func readToEnd(_ source: Int32, name: String,
                          _ body: (UnsafeRawBufferPointer) throws(CommandFailure) -> Void) throws(CommandFailure) {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            switch retryingInterrupts({ read(source, chunk.baseAddress, chunk.count) }) {
            case .success(0): return
            case .success(let count): try body(UnsafeRawBufferPointer(rebasing: chunk[..<count]))
            case .failure(let errno): throw CommandFailure("\(name): cannot read: \(errno)")
            }
        }
    }

    /// Lets the memory file go (not standard input itself).
    func close() {
        if descriptor != STDIN_FILENO { Glibc.close(descriptor) }
    }

    /// `message` with the memory file's path put back as the input's name.
    func naming(_ message: String) -> String {
        message.replacing(path, with: name)
    }
}
