import ArgumentParser
import Thumbcache
import FoundationEssentials
import ThumbcacheSync

struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Make thumbnails of image files directly, without the cache (like vipsthumbnail).",
        discussion: """
            Decodes each image — PNG, JPEG, WebP, GIF, TIFF, HEIC, AVIF, JPEG XL, SVG, camera raw \
            (DNG, CR2, CR3, NEF, ARW, ORF, RAF, RW2), BMP, ICO, Netpbm, TGA or QOI, told apart by \
            content, not name — shrinking it while it loads where the format allows (JPEG, WebP, a \
            raw file's preview, a TIFF's reduced page, a HEIF's embedded thumbnail; SVG is drawn \
            at the size), resizes with a streaming filter whose memory does not grow with the \
            image's height, turns it upright, and writes PNG (or JPEG). Other files get what \
            QuickLook shows: a video's representative frame, an audio file's cover, a PDF's first \
            page, an office document's stored thumbnail, an e-book's cover, a comic's first page, \
            a text file's first lines on a page, a font's "Aa" drawn in it.

            Files are decoded in a sandboxed worker process (see `thumbcache warm --help`) unless \
            --in-process is given, which decodes PNG and JPEG only. A file that cannot be made into a thumbnail is reported with \
            its path and reason; the others are still written, and the exit status is 1.

            --page draws another page of a document than the first (a PDF's); asking a file for a \
            page it does not have is an error naming how many it has.

            Examples:
              thumbcache thumbnail photo.jpg -o photo-256.png
              thumbcache thumbnail --page 20 --size 1024 manual.pdf -o page-20.png
              thumbcache thumbnail --size 128 --output-dir thumbs ~/Pictures/*.jpg
              thumbcache thumbnail IMG_0042.HEIC DSC_0007.NEF art.svg --output-dir thumbs
              curl -s https://example.org/photo.jpg | thumbcache thumbnail - -o photo.png
            """
    )

    @Argument(help: ArgumentHelp("Image (or other) files; - reads standard input.", valueName: "file"))
    var files: [String]

    @OptionGroup var decoderOptions: DecoderOptions

    @Option(name: .shortAndLong, help: "Largest width and height of the thumbnail, in pixels.")
    var size: Int = 256

    @Flag(name: .long, help: "Fill the square box, cropping the image (default: fit inside it).")
    var fill = false

    @Option(name: .long, help: "Resampling kernel: lanczos3 or mitchell.")
    var kernel: ResamplingKernel = .lanczos3

    @Flag(name: .long, help: "Resample in linear light (truer averages of bright and dark detail; slower).")
    var linear = false

    @Option(name: .long, help: ArgumentHelp("The page of a document to draw, from 1.", valueName: "n"))
    var page: Int = 1

    @Option(name: .long, help: "Output format: png or jpeg (default: what --output's name ends in, .jpg or .jpeg for jpeg; else png).")
    var format: OutputFormat?

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file (only with one input); - for standard output.", valueName: "path"))
    var output: String?

    @Option(name: .long, help: ArgumentHelp("Directory for the thumbnails, named after each input.", valueName: "dir"))
    var outputDir: String?

    enum OutputFormat: String, ExpressibleByArgument {
        case png, jpeg
    }

    func validate() throws {
        guard size >= 1 && size <= 16384 else { throw ValidationError("--size must be between 1 and 16384") }
        guard page >= 1 else { throw ValidationError("--page counts from 1") }
        if output != nil && files.count != 1 { throw ValidationError("--output takes one input file; use --output-dir for several") }
        if output != nil && outputDir != nil { throw ValidationError("give --output or --output-dir, not both") }
        if let refusal = output.flatMap(OutputFile.refusal) { throw ValidationError(refusal) }
        if files.contains(PipedInput.standardInput) && output == nil {
            throw ValidationError("- reads standard input, which has no name to give the thumbnail: give -o FILE (or -o - to pipe it on)")
        }
    }

    func run() throws {
        var options = ThumbnailOptions(maxWidth: size, maxHeight: size, mode: fill ? .fill : .fit, kernel: kernel, linearLight: linear)
        options.page = page - 1
        if let outputDir { try FileManager.default.createDirectory(atPath: outputDir, withIntermediateDirectories: true) }
        var failed = 0
        let decoding = decoderOptions.isolation().makeDecoding(defaultWorkers: 1)
        for file in files {
            var piped: PipedInput?
            defer { piped?.close() }
            do {
                piped = try PipedInput.open(file)
                // The types are made only for a file whose bytes name no format (a copy of the
                // process's built-ins after the first).
                let image = try DirectThumbnail.make(piped?.path ?? file, options: options, decoding: decoding, types: ContentTypeRegistry())
                let bytes = outputFormat == .png ? try ImageEncoder.png(image) : try ImageEncoder.jpeg(image)
                try OutputFile.write(bytes, to: destination(for: file))
            } catch {
                failed += 1
                let message = "\(error)"
                writeStandardError("thumbcache: \(piped?.naming(message) ?? message)\n")
            }
        }
        if failed > 0 { throw ExitCode(1) }
    }

    /// --format, else the one `--output`'s name says, as `get` reads it: a `thumb.jpg` holds a JPEG.
    private var outputFormat: OutputFormat {
        if let format { return format }
        let name = output?.lowercased() ?? ""
        return name.hasSuffix(".jpg") || name.hasSuffix(".jpeg") ? .jpeg : .png
    }

    private func destination(for file: String) -> String {
        if let output { return output }
        let base = FilePaths.deletingExtension(FilePaths.lastComponent(file))
        let ext = outputFormat == .png ? "png" : "jpg"
        let directory = outputDir ?? "."
        return (directory.hasSuffix("/") ? directory : directory + "/") + "\(base).\(ext)"
    }
}

extension ResamplingKernel: ExpressibleByArgument {}
