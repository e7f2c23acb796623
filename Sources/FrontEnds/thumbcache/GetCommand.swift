import ArgumentParser
import Foundation
import Thumbcache

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Write a file's thumbnail, from the cache or made and stored now.",
        discussion: """
            --kind chooses the representation: icon (the generic icon of the file's type), low \
            (a fast low-quality image: the JPEG's embedded EXIF thumbnail or a smaller cached \
            one), full (the real thumbnail), or best (the best one available, the default). \
            The output is PNG. When best falls back because the thumbnail cannot be made (a \
            corrupt file, a decoder that failed), it says why on standard error and exits 0; \
            --kind full makes that an error.

            Example:
              thumbcache get ~/Pictures/cat.jpg --size 128 --scale 2 -o cat.png
            """
    )

    @Argument(help: ArgumentHelp("The file.", valueName: "file"))
    var file: String

    @Option(name: .shortAndLong, help: "Thumbnail size in points (the largest side).")
    var size: Int = 256

    @Option(name: .long, help: "Pixels per point.")
    var scale: Double = 1

    @Option(name: .long, help: "icon, low, full or best.")
    var kind: Kind = .best

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the PNG.", valueName: "path"))
    var output: String

    @Flag(name: .long, help: "Print what was written as JSON.")
    var json = false

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(name: .long, inversion: .prefixedNo, help: "Use a valid thumbnail another program left in $XDG_CACHE_HOME/thumbnails instead of decoding the file.")
    var freedesktopImport = true

    @OptionGroup var decoderOptions: DecoderOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var remoteOptions: RemoteOptions

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case icon, low, full, best
    }

    func validate() throws {
        guard (1...4096).contains(size) else { throw ValidationError("--size must be between 1 and 4096") }
        guard scale > 0 && scale <= 8 else { throw ValidationError("--scale must be between 0 and 8") }
        guard FileManager.default.fileExists(atPath: file) else { throw ValidationError("no such file: \(file)") }
    }

    func run() async throws {
        let (providers, contentTypes) = pluginOptions.providers(decoderOptions)
        let remote = try remoteOptions.open()
        let generator = ThumbnailGenerator(store: try cacheOptions.open(), providers: providers, types: contentTypes,
                                           isolation: decoderOptions.isolation(workers: 1),
                                           standardThumbnails: freedesktopImport ? FreedesktopThumbnailCache() : nil,
                                           remote: remote)
        let types: ThumbnailRequest.RepresentationTypes =
            switch kind {
            case .icon: .icon
            case .low: .lowQualityThumbnail
            case .full: .thumbnail
            case .best: .all
            }
        let request = ThumbnailRequest(fileAt: FilePaths.resolved(file), size: Double(size), scale: scale, representationTypes: types)
        let representation = try await generator.bestRepresentation(for: request)
        if let reason = representation.standsInBecause {
            FileHandle.standardError.write(Data("thumbcache: \(file): the \(representation.kind) stands in for the thumbnail: \(reason)\n".utf8))
        }
        try Data(representation.pngData()).write(to: URL(fileURLWithPath: output))
        // One thumbnail made here goes up now, while the connection is open; a failure leaves it queued.
        _ = generator.finishUploads()
        if json {
            let info = Written(
                path: output, kind: representation.kind.description, width: representation.pixelWidth,
                height: representation.pixelHeight, scale: representation.scale, fromCache: representation.fromCache)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(info), as: UTF8.self))
        }
    }
}

/// What `get --json` prints.
struct Written: Encodable {
    var path: String
    var kind: String
    var width: Int
    var height: Int
    var scale: Double
    var fromCache: Bool
}
