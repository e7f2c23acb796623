import ArgumentParser
import FoundationEssentials
import ThumbcacheSync
import Glibc
import Thumbcache
import ThumbcacheDaemon

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Write a file's thumbnail, from the cache or made and stored now.",
        discussion: """
            --kind chooses the representation: icon (the generic icon of the file's type), low \
            (a fast low-quality image: the JPEG's embedded EXIF thumbnail or a smaller cached \
            one), full (the real thumbnail), best (the best one available, the default), or \
            preview (a large look at the page --page names, 1024 points unless --size says; \
            cached too, and evicted before thumbnails). The output is PNG, or JPEG when its \
            name ends in .jpg or .jpeg; -o - writes the PNG to standard output. When best falls back because the thumbnail cannot be made (a \
            corrupt file, a decoder that failed), it says why on standard error and exits 0; \
            --kind full makes that an error.

            With its default options (those of the example below, --json and --cache), a \
            get that misses the cache asks `thumbcache daemon`, when one runs for the same \
            cache, to make the thumbnail with its workers, which are already started; \
            --no-daemon makes it in this process.

            Examples:
              thumbcache get ~/Pictures/cat.jpg --size 128 --scale 2 -o cat.png
              thumbcache get manual.pdf --kind preview --page 20 -o page-20.jpg
              thumbcache get clip.mp4 -o - | display
            """
    )

    @Argument(help: ArgumentHelp("The file.", valueName: "file"))
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Size in points (the largest side): 256, or 1024 for a preview.", valueName: "points"))
    var size: Int?

    @Option(name: .long, help: "Pixels per point.")
    var scale: Double = Call.defaults.scale

    @Option(name: .long, help: "icon, low, full, best or preview.")
    var kind: Kind = Call.defaults.kind

    @Option(name: .long, help: ArgumentHelp("The page a preview shows, from 1 (a document's, a comic's).", valueName: "n"))
    var page: Int = 1

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the PNG (a JPEG if it ends in .jpg or .jpeg); - for standard output.", valueName: "path"))
    var output: String

    @Flag(name: .long, help: "Print what was written as JSON.")
    var json = false

    @Flag(name: .long, help: "Make the thumbnail here even when a running daemon serves the same cache.")
    var noDaemon = false

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(name: .long, inversion: .prefixedNo, help: "Use a valid thumbnail another program left in $XDG_CACHE_HOME/thumbnails instead of decoding the file.")
    var freedesktopImport = true

    @OptionGroup var decoderOptions: DecoderOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var remoteOptions: RemoteOptions

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case icon, low, full, best, preview
    }

    /// The size asked, or the kind's own default.
    private var points: Int { size ?? (kind == .preview ? Call.previewSize : Call.defaults.size) }

    func validate() throws {
        guard (1...4096).contains(points) else { throw ValidationError("--size must be between 1 and 4096") }
        guard page >= 1 else { throw ValidationError("--page counts from 1") }
        guard page == 1 || kind == .preview else { throw ValidationError("--page is for --kind preview: a thumbnail shows the first page") }
        guard scale > 0 && scale <= 8 else { throw ValidationError("--scale must be between 0 and 8") }
        if file == PipedInput.standardInput {
            throw ValidationError("get keeps a file's thumbnail by its path and content, and standard input has no path: "
                + "thumbcache thumbnail - -o FILE makes one without the cache")
        }
        guard FileManager.default.fileExists(atPath: file) else { throw ValidationError("no such file: \(file)") }
        guard !(json && output == OutputFile.standardOutput) else { throw ValidationError("--json prints to standard output, which -o - gives the image") }
        if let refusal = OutputFile.refusal(output) { throw ValidationError(refusal) }
    }

    func run() async throws {
        let (providers, contentTypes) = pluginOptions.providers(decoderOptions)
        // One file, often one process a file: a cache hit asks the remote nothing, and a remote
        // that fails does not keep the file from its thumbnail.
        let remote = try remoteOptions.open(checked: false)
        let call = Call(file: file, size: points, scale: scale, kind: kind, output: output, json: json, page: page - 1)
        let generator = ThumbnailGenerator(store: try cacheOptions.open(), providers: providers, types: contentTypes,
                                           isolation: decoderOptions.isolation(workers: 1),
                                           standardThumbnails: freedesktopImport ? FreedesktopThumbnailCache() : nil, remote: remote)
        try await Self.get(call, generator: generator)
    }

    /// What one `get` asks for, however it was read; its defaults are the options'.
    struct Call {
        static let defaults = Call(file: "")
        static let previewSize = 1024

        var file: String
        var size = 256
        var scale = 1.0
        var kind = Kind.best
        var output = ""
        var json = false
        /// The preview's page, 0 the first.
        var page = 0
        var cache: String?
        /// Ask the session's daemon on a miss (only a quick call does).
        var daemon = true
        /// A remote tier is configured (`THUMBCACHE_REMOTE`): a quick call answers a hit only,
        /// and a miss takes the usual way, which asks the remote before decoding.
        var remote = false
    }

    /// A `get` with only these options (`-o`, `-s`, `--scale`, `--kind`, `--page`, `--json`, `--cache`, each
    /// valid) read without ArgumentParser, whose reflection is the largest part of a cache hit's
    /// start (Docs/PERFORMANCE.md); nil for anything else, which takes the usual way and its
    /// errors. With a remote in the environment, only a hit is answered the quick way.
    static func quickCall(_ arguments: [String]) -> Call? {
        guard arguments.count >= 4, arguments[1] == "get" else { return nil }
        var call = Call(file: "")
        call.remote = getenv("THUMBCACHE_REMOTE").map { $0.pointee != 0 } ?? false
        var sized = false
        var files: [String] = []
        var rest = arguments[2...].makeIterator()
        while let argument = rest.next() {
            switch argument {
            case "-o", "--output": guard let value = rest.next() else { return nil }; call.output = value
            case "-s", "--size": guard let value = rest.next().flatMap({ Int($0) }), (1...4096).contains(value) else { return nil }; call.size = value; sized = true
            case "--scale": guard let value = rest.next().flatMap({ Double($0) }), value > 0 && value <= 8 else { return nil }; call.scale = value
            case "--kind": guard let value = rest.next().flatMap({ Kind(rawValue: $0) }) else { return nil }; call.kind = value
            case "--page": guard let value = rest.next().flatMap({ Int($0) }), value >= 1 else { return nil }; call.page = value - 1
            case "--cache": guard let value = rest.next(), !value.isEmpty else { return nil }; call.cache = value
            case "--json": call.json = true
            case "--no-daemon": call.daemon = false
            default:
                guard !argument.hasPrefix("-") else { return nil }
                files.append(argument)
            }
        }
        // access(2), not FileManager, whose making is a part of a cache hit's time worth sparing.
        guard files.count == 1, !call.output.isEmpty, access(files[0], F_OK) == 0 else { return nil }
        // Standard output (`-`) without --json and not a terminal; anything else like an option is ArgumentParser's to refuse.
        if call.output.hasPrefix("-") && (call.output != OutputFile.standardOutput || call.json || OutputFile.refusal(call.output) != nil) { return nil }
        // A page is a preview's (ArgumentParser's way says so otherwise), and a preview has its own size.
        guard call.page == 0 || call.kind == .preview else { return nil }
        if call.kind == .preview, !sized { call.size = Call.previewSize }
        call.file = files[0]
        return call
    }

    /// The store a quick call reads and writes.
    static func store(_ call: Call) throws -> ThumbnailStore {
        try ThumbnailStore.open(directory: call.cache ?? ThumbnailStore.defaultDirectory)
    }

    /// Answers a quick call from the cache: true with the stored thumbnail written, false on a
    /// miss. Synchronous, for the main thread (``OneFile/stored(_:in:deliver:)``).
    static func answerFromCache(_ call: Call, store: ThumbnailStore) throws -> Bool {
        try OneFile.stored(request(call), in: store) { try finish($0, call) }
    }

    /// What a quick call that missed the cache does next.
    enum Miss {
        /// A remote is configured: nothing was written, and the usual way takes the call.
        case usualWay
        /// The daemon serving the same store made the thumbnail, and it is written.
        case answered
        /// The thumbnail is made here (``run(_:store:prepared:)``), the file's worker started.
        case decoding(OneFile.Prepared)
    }

    /// A quick call's miss, with every other option at its default, on the main thread before any
    /// `await` (where a PDF's worker is forked, ``OneFile/prepared(forFileAt:isolation:)``): the
    /// daemon serving the same store, if one runs, makes the thumbnail; else the file's worker starts.
    static func miss(_ call: Call, store: ThumbnailStore) throws -> Miss {
        if call.remote { return .usualWay }
        let request = request(call)
        if call.daemon, let answer = SessionSocket.ask(request, storeDirectory: store.directory) {
            try finish(answer, call, fromDaemon: true)
            return .answered
        }
        return .decoding(OneFile.prepared(forFileAt: request.path, isolation: DecoderOptions.oneFile))
    }

    /// Makes, stores and writes a quick call's thumbnail after ``miss(_:store:)``.
    static func run(_ call: Call, store: ThumbnailStore, prepared: OneFile.Prepared) async throws {
        try await OneFile.representation(request(call), store: store, prepared: prepared, standardThumbnails: FreedesktopThumbnailCache()) {
            types in PluginOptions.providers(plugins: true, isolation: DecoderOptions.oneFile, types: &types)
        } deliver: { try finish($0, call) }
    }

    static func request(_ call: Call) -> ThumbnailRequest {
        let representationTypes: ThumbnailRequest.RepresentationTypes =
            switch call.kind {
            case .icon: .icon
            case .low: .lowQualityThumbnail
            case .full: .thumbnail
            case .best: .all
            case .preview: .preview
            }
        var request = ThumbnailRequest(fileAt: FilePaths.resolved(call.file), size: Double(call.size), scale: call.scale,
                                       representationTypes: representationTypes)
        request.page = call.page
        return request
    }

    static func get(_ call: Call, generator: ThumbnailGenerator) async throws {
        try finish(try await generator.bestRepresentation(for: request(call)), call)
        // One thumbnail made here goes up now, while the connection is open; a failure leaves it queued.
        _ = generator.finishUploads()
    }

    /// Says why a lesser representation stands in, if one does, writes the PNG where the call
    /// says, and the JSON line if asked.
    static func finish(_ representation: ThumbnailRepresentation, _ call: Call, fromDaemon: Bool = false) throws {
        if let reason = representation.standsInBecause {
            writeStandardError("thumbcache: \(call.file): the \(representation.kind) stands in for the thumbnail: \(reason)\n")
        }
        try OutputFile.write(encoded(representation, for: call.output), to: call.output)
        if call.json {
            let info = Written(
                path: call.output, kind: representation.kind.description, width: representation.pixelWidth,
                height: representation.pixelHeight, scale: representation.scale, fromCache: representation.fromCache, fromDaemon: fromDaemon,
                page: representation.kind == .preview ? call.page + 1 : nil)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(info), as: UTF8.self))
        }
    }
}

/// The representation's bytes in the format `output`'s name asks: JPEG for `.jpg` or `.jpeg`
/// (as stored when it is one: a preview), else PNG.
func encoded(_ representation: ThumbnailRepresentation, for output: String) throws -> [UInt8] {
    let name = output.lowercased()
    guard name.hasSuffix(".jpg") || name.hasSuffix(".jpeg") else { return try representation.pngData() }
    return representation.encoding == .jpeg ? representation.data : try ImageEncoder.jpeg(representation.image(), quality: 90)
}

/// What `get --json` prints.
struct Written: Encodable {
    var path: String
    var kind: String
    var width: Int
    var height: Int
    var scale: Double
    var fromCache: Bool
    /// Made (or found) by the session's daemon.
    var fromDaemon: Bool
    /// A preview's page, from 1.
    var page: Int?
}
