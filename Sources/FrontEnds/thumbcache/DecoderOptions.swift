import ArgumentParser
import Thumbcache

/// Where and under which limits the decoders run; shared by the commands that decode files.
struct DecoderOptions: ParsableArguments {
    @Flag(name: .long, help: ArgumentHelp(
        "Decode in this process instead of sandboxed worker processes. Slightly faster to start, but a decoder crash ends the command and a hostile file's exploit runs as you: for trusted files only. Decodes PNG and JPEG only: every other format needs the worker."))
    var inProcess = false

    @Option(name: .long, help: ArgumentHelp("Seconds a file may take to decode before its worker is stopped and the file fails.", valueName: "seconds"))
    var timeout: Double = Self.defaultTimeout

    @Option(name: .long, help: ArgumentHelp("Memory each decoder worker may use, like 512M or 2G.", valueName: "size"))
    var memoryLimit: String = Self.defaultMemoryLimit

    /// The defaults, here and for a call read without ArgumentParser (the plug-in's).
    static let defaultTimeout = 20.0
    static let defaultMemoryLimit = "1G"

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be more than 0 seconds") }
        guard let bytes = CompactCommand.parseSize(memoryLimit), bytes >= 64 << 20 else {
            throw ValidationError("--memory-limit takes a size of at least 64M, like 512M or 2G, got '\(memoryLimit)'")
        }
    }

    /// The isolation these options describe.
    func isolation(workers: Int? = nil) -> DecoderIsolation {
        inProcess ? .inProcess : Self.sandboxed(timeout: timeout, memoryLimit: memoryLimit, workers: workers)
    }

    /// Sandboxed workers under these limits (the defaults: what a command given none of these options uses).
    static func sandboxed(timeout: Double = defaultTimeout, memoryLimit: String = defaultMemoryLimit, workers: Int?) -> DecoderIsolation {
        .sandboxed(timeout: timeout, memoryLimit: CompactCommand.parseSize(memoryLimit) ?? 1 << 30, workers: workers)
    }
}
