import ArgumentParser
import FoundationEssentials
import ThumbcacheSync
import Thumbcache
import ThumbcacheWorker

struct TextCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "text",
        abstract: "Print the words inside files, as the full-text index will read them.",
        discussion: """
            Extracts each file's text in the sandboxed document worker: a PDF's pages in reading \
            order (poppler), office files and e-books (their body, chapters in order), subtitles, \
            e-mail (subject, correspondents, text parts), text files in \
            their own charset (UTF-8, UTF-16 with its mark, else \
            Windows-1252), HTML without its markup, scripts and styles. At most --limit bytes of \
            UTF-8 per file. A file of a format without words (a photo) is an error naming it.

              thumbcache text report.pdf
              thumbcache text index.html notes.txt --json
              pdftk a.pdf b.pdf cat output - | thumbcache text -
            """
    )

    @Argument(help: ArgumentHelp("Files to read; - reads standard input.", valueName: "file"))
    var files: [String]

    @Option(name: .long, help: ArgumentHelp("Most bytes of text per file, like 64K or 1M.", valueName: "size"))
    var limit: String = "1M"

    @Flag(name: .long, help: "One JSON object per file: path, format, bytes and text.")
    var json = false

    @OptionGroup var decoderOptions: DecoderOptions

    func validate() throws {
        guard let bytes = CompactCommand.parseSize(limit), bytes >= 1, bytes <= 64 << 20 else {
            throw ValidationError("--limit takes a size from 1 byte to 64M, like 64K or 1M, got '\(limit)'")
        }
    }

    func run() throws {
        let limit = CompactCommand.parseSize(limit) ?? 1 << 20
        let decoding = decoderOptions.isolation().makeDecoding(defaultWorkers: 1)
        let types = ContentTypeRegistry()
        var failed = 0
        for file in files {
            var piped: PipedInput?
            defer { piped?.close() }
            do {
                piped = try PipedInput.open(file)
                let path = piped?.path ?? FilePaths.resolved(file)
                let (format, text) = try decoding.text(ofFileAt: path, format: DirectThumbnail.readAs(path, types: types), limit: limit)
                let shown = piped == nil ? path : file
                if json {
                    struct Extracted: Encodable { var path: String, format: String, bytes: Int, text: String }
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    print(String(decoding: try encoder.encode(Extracted(path: shown, format: format.rawValue, bytes: text.utf8.count, text: text)), as: UTF8.self))
                } else {
                    if files.count > 1 { print("==> \(shown) <==") }
                    print(text)
                }
            } catch {
                failed += 1
                let message = "\(error)"
                writeStandardError("thumbcache: \(piped?.naming(message) ?? message)\n")
            }
        }
        if failed > 0 { throw ExitCode(1) }
    }
}
