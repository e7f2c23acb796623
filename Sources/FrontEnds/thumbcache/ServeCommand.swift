import ArgumentParser
import FoundationEssentials
import ThumbcacheSync
import Thumbcache
import ThumbcacheServer

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve thumbnails, search and tags over HTTP, with a page to browse them.",
        discussion: """
            Shows the files under each ROOT (default: your home folder), from the same cache the \
            other commands use. Open the address it prints: Recents, Browse, Tags and Search, \
            thumbnails in a grid; select a file for its attributes and tags. The page works \
            without JavaScript.

            For programs:
              GET /thumbnails/HASH?size=256&scale=2   a thumbnail by content hash (immutable, ETag, 304)
              GET /thumbnail?path=FILE&size=256       redirects to the immutable URL of the file's content
              GET /search?q=QUERY&onlyin=DIR&limit=N&attrs=A,B   as `thumbcache search --json`
              GET /info?path=FILE                     as `thumbcache info --json`
              GET /tags                               every tag with its count
              PUT|DELETE /tags?path=FILE&tag=TAG      writes user.xdg.tags and updates the index

            It listens on loopback unless --address says otherwise; any other address needs the \
            token (kept 0600 in the cache directory) on every request, as `Authorization: Bearer \
            TOKEN` or the cookie the printed link sets. Writes always need it and must come from \
            the page's own origin. Nothing outside the roots is read or shown. Search and Recents \
            show indexed files: `thumbcache warm ROOT` first, or pass --warm.

            Examples:
              thumbcache serve ~/Pictures --warm
              thumbcache serve --address 0.0.0.0 --port 8080 /srv/photos
              curl -s 'http://127.0.0.1:8421/search?q=holiday&limit=5'
            """
    )

    @Argument(help: ArgumentHelp("Folders to serve (default: your home folder).", valueName: "root"))
    var roots: [String] = []

    @Option(name: .long, help: ArgumentHelp("Address to listen on; anything but loopback needs the token.", valueName: "address"))
    var address = "127.0.0.1"

    @Option(name: .long, help: ArgumentHelp("Port to listen on (0 picks a free one).", valueName: "port"))
    var port = 8421

    @Flag(name: .long, help: "Ask for the token on loopback too (on a machine shared with other users).")
    var requireToken = false

    @Flag(name: .long, help: "Warm the roots (thumbnails and index) in the background while serving.")
    var warm = false

    @Flag(name: .long, help: "Print where it listens as one line of JSON (url, port, token file).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Memory for the thumbnails served last, kept encoded (default 64M; 0 keeps none).",
                                            valueName: "size"))
    var memoryCache = "64M"

    @Option(name: .long, help: ArgumentHelp(
        "Close a connection that waits this long for its next request to be complete, or that takes none of a response for this long.",
        valueName: "seconds"))
    var idleTimeout = ThumbnailServer.Configuration.defaultIdleTimeout

    @OptionGroup var cacheOptions: CacheOptions

    @OptionGroup var decoderOptions: DecoderOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var remoteOptions: RemoteOptions

    @Option(name: .long, help: ArgumentHelp(
        "With an s3:// --remote, answer /thumbnails/{hash} the bucket holds with a redirect: to BASE/OBJECT (the bucket's public address or a CDN before it), or to a presigned URL valid for an hour with `presigned`.",
        valueName: "base"))
    var remotePublicURL: String?

    var redirectTarget: RemoteRedirect.Target? {
        remotePublicURL.map { $0 == "presigned" ? .presigned(expires: 3600) : .base($0) }
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard idleTimeout > 0 && idleTimeout <= 86400 else { throw ValidationError("--idle-timeout takes seconds, above 0 and at most a day") }
        guard CompactCommand.parseSize(memoryCache) != nil else {
            throw ValidationError("--memory-cache takes a size like 64M, 512K or 0, got '\(memoryCache)'")
        }
        if let remotePublicURL {
            guard remoteOptions.url != nil else { throw ValidationError("--remote-public-url needs --remote (or THUMBCACHE_REMOTE)") }
            guard remotePublicURL == "presigned" || remotePublicURL.hasPrefix("https://") || remotePublicURL.hasPrefix("http://") else {
                throw ValidationError("--remote-public-url takes an http(s):// address or `presigned`")
            }
        }
        for root in roots where !FileManager.default.fileExists(atPath: root) { throw ValidationError("no such folder: \(root)") }
    }

    func run() async throws {
        let served: ServedRoots
        do {
            served = try ServedRoots((roots.isEmpty ? [FilePaths.home] : roots).map(FilePaths.resolved))
        } catch {
            throw CommandFailure(error.message)
        }
        let store = try cacheOptions.open()
        let index = try cacheOptions.openIndex()
        let token = try AccessToken.loadOrCreate(directory: store.directory)
        let (providers, types) = pluginOptions.providers(decoderOptions)
        let remote = try remoteOptions.open()
        let generator = ThumbnailGenerator(store: store, providers: providers, types: types, isolation: decoderOptions.isolation(),
                                           remote: remote)
        var redirect: RemoteRedirect?
        if let remote, let target = redirectTarget {
            guard let made = RemoteRedirect(remote: remote, target: target) else {
                throw CommandFailure("--remote-public-url needs an s3:// remote: memcached has no address a browser can use")
            }
            redirect = made
        }
        let server = ThumbnailServer(configuration: .init(address: address, port: port, requireToken: requireToken,
                                                          memoryCache: CompactCommand.parseSize(memoryCache) ?? 64 << 20, remoteRedirect: redirect,
                                                          idleTimeout: idleTimeout),
                                     roots: served, index: index, generator: generator, token: token)
        let json = self.json, warm = self.warm
        let host = address.contains(":") ? "[\(address)]" : address
        try await server.run { port in
            let url = "http://\(host):\(port)/"
            let tokenFile = store.directory + "/" + AccessToken.fileName
            let needsToken = !server.configuration.isLoopback || server.configuration.requireToken
            // Written unbuffered: a program that started the server reads the address at once.
            var lines: [String] = []
            if json {
                struct Started: Encodable { var url: String, port: Int, tokenFile: String, roots: [String], tokenRequired: Bool }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let started = Started(url: url, port: Int(port), tokenFile: tokenFile, roots: served.paths, tokenRequired: needsToken)
                lines.append(String(decoding: try! encoder.encode(started), as: UTF8.self))
            } else {
                lines.append("Serving \(served.paths.joined(separator: ", ")) at \(url)")
                if needsToken { lines.append("Open \(url)?token=\(token) (the token is kept in \(tokenFile))") }
                if (try? index.statistics().items) == 0 && !warm {
                    lines.append("The index is empty: search and Recents show indexed files. Run `thumbcache warm` on a root, or pass --warm.")
                }
            }
            writeStandardOutput(lines.map { $0 + "\n" }.joined())
            if warm {
                Task.detached {
                    let summary = await server.warmRoots()
                    try? index.sync()
                    writeStandardError("thumbcache serve: warmed \(summary.seen) files (\(summary.generated) thumbnails made, \(summary.failed) failed) in \(fixed(summary.elapsedSeconds, places: 1)) s\n")
                }
            }
        }
    }
}
