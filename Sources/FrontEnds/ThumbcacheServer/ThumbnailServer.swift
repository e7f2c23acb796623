import FoundationEssentials
import Glibc
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Thumbcache

/// `thumbcache serve`: thumbnails by immutable content-hash URLs, search, attributes and tags
/// over HTTP, and a page to browse them, for the files under a set of folders.
package final class ThumbnailServer: Sendable {
    package struct Configuration: Sendable {
        /// Address to bind: loopback by default; any other needs the token for every request.
        package var address: String
        /// 0 picks a free port (reported to `run`'s `onListening`).
        package var port: Int
        /// Ask for the token on loopback too (for machines shared with other users).
        package var requireToken: Bool
        /// The grid's thumbnail size in points, and the size in search results' URLs.
        package var tileSize: Int

        /// Bytes of recently served thumbnails kept in memory.
        package var memoryCache: Int
        /// Thumbnails the remote tier holds are answered with a redirect there.
        package var remoteRedirect: RemoteRedirect?
        /// Seconds a connection may stay without a request answered or a byte of its response
        /// taken: a client idle between requests, or sending a request's head more slowly than
        /// this, or not reading, is closed. Without it each such client held a descriptor for good.
        package var idleTimeout: Double

        package static let defaultIdleTimeout = 60.0

        package init(address: String = "127.0.0.1", port: Int = 8421, requireToken: Bool = false, tileSize: Int = 128,
                    memoryCache: Int = 64 << 20, remoteRedirect: RemoteRedirect? = nil, idleTimeout: Double = defaultIdleTimeout) {
            self.idleTimeout = idleTimeout
            self.memoryCache = memoryCache
            self.remoteRedirect = remoteRedirect
            self.address = address
            self.port = port
            self.requireToken = requireToken
            self.tileSize = tileSize
        }

        /// True for 127.0.0.0/8, ::1 and localhost.
        package var isLoopback: Bool {
            address == "localhost" || address == "::1" || address.hasPrefix("127.")
        }
    }

    package let configuration: Configuration
    package let roots: ServedRoots
    let files: ServedFiles
    let token: String
    let hot: HotThumbnails
    let policy: AccessPolicy

    /// - Parameters:
    ///   - roots: the folders shown; nothing outside them is read or revealed.
    ///   - generator: makes the thumbnails the cache lacks; its store is the one served. A file
    ///     whose tags are written is re-indexed with its providers and worker pool.
    ///   - token: the access token (``AccessToken/loadOrCreate(directory:)``).
    package init(configuration: Configuration, roots: ServedRoots, index: MetadataIndex, generator: ThumbnailGenerator, token: String) {
        self.configuration = configuration
        self.roots = roots
        self.token = token
        hot = HotThumbnails(budget: configuration.memoryCache)
        let loopback = configuration.isLoopback
        policy = AccessPolicy(token: token, tokenForReads: !loopback || configuration.requireToken,
                              hosts: loopback ? ["127.0.0.1", "localhost", "[::1]", configuration.address.lowercased()] : nil)
        files = ServedFiles(roots: roots, index: index, generator: generator)
    }

    /// Warms the roots into the store and the index (`serve --warm`), while serving if need be.
    package func warmRoots() async -> WarmSummary {
        await files.warm(roots.paths)
    }

    /// Serves until the task is cancelled or SIGINT/SIGTERM arrives; `onListening` gets the bound port.
    ///
    /// ``HitFront`` holds the address and answers held thumbnails itself; every other connection
    /// it hands to Hummingbird, which listens only on a socket in a private folder that nothing
    /// else is told of.
    package func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        var logger = Logger(label: "thumbcache.serve")
        logger.logLevel = .warning
        let (hot, policy) = (self.hot, self.policy)
        let idle = TimeAmount.nanoseconds(Int64(configuration.idleTimeout * 1e9))
        let handed = HandedConnections(logger: logger, idleTimeout: idle)
        let front = try HitFront(address: configuration.address, port: configuration.port, threads: ProcessInfo.processInfo.activeProcessorCount,
                                 idleTimeout: configuration.idleTimeout, hot: hot, policy: policy) { descriptor, read in
            handed.adopt(descriptor, read: read)
        }
        PrivateSocketFolder.removeStale()
        guard let folder = PrivateSocketFolder.make() else {
            throw HitFront.ListenFailure(description: "cannot make a private folder in /tmp: \(String(cString: strerror(errno)))")
        }
        defer { PrivateSocketFolder.remove(folder) }
        let app = Application(
            router: makeRouter(),
            server: HTTPServerBuilder { responder in
                handed.use(HotHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idle)), hot: hot, policy: policy))
            },
            configuration: .init(address: .unixDomainSocket(path: folder + "/" + PrivateSocketFolder.socketName), serverName: nil),
            onServerRunning: { _ in
                front.start()
                await onListening(front.port)
            }, logger: logger)
        try await app.runService()
        // Hummingbird's graceful shutdown waited for the connections its own listener took,
        // which are none: every connection comes through the front.
        await handed.quiesce(within: 30)
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(options: .autoGenerateHeadEndpoints)
        let renderer = PageRenderer(tileSize: configuration.tileSize)
        let loopback = configuration.isLoopback
        router.add(middleware: RequestGuard(policy: policy, renderer: renderer, issuesCookie: loopback && !configuration.requireToken))

        let thumbnails = ThumbnailEndpoints(files: files, hot: hot, redirect: configuration.remoteRedirect)
        router.get("/thumbnails/:hash") { request, context in try await thumbnails.thumbnail(context.parameters.require("hash")[...], request) }
        router.get("/thumbnail") { request, _ in try await thumbnails.redirect(request) }
        let previews = PreviewEndpoints(files: files, hot: hot)
        router.get("/previews/:hash") { request, context in try await previews.preview(context.parameters.require("hash")[...], request) }
        router.get("/preview") { request, _ in try await previews.redirect(request) }

        let api = QueryEndpoints(files: files, thumbnailSize: configuration.tileSize)
        router.get("/search") { request, _ in try await api.search(request) }
        router.get("/info") { request, _ in try await api.info(request) }
        router.get("/tags") { request, _ in try await api.tags(request) }
        router.put("/tags") { request, _ in try await api.editTag(request, add: true) }
        router.delete("/tags") { request, _ in try await api.editTag(request, add: false) }

        let originals = OriginalEndpoint(files: files)
        router.get("/files") { request, _ in try await originals.original(request) }

        let pages = PageEndpoints(files: files, renderer: renderer)
        router.get("/") { request, _ in try await pages.recents(request) }
        router.get("/browse") { request, _ in try await pages.browse(request) }
        router.get("/tagged") { request, _ in try await pages.tagged(request) }
        router.get("/find") { request, _ in try await pages.find(request) }
        router.get("/item") { request, _ in try await pages.item(request) }
        router.post("/item/tags") { request, _ in try await pages.editTag(request) }
        router.get("/assets/page.css") { _, _ in PageEndpoints.asset(PageAssets.css, type: "text/css; charset=utf-8") }
        router.get("/assets/page.js") { _, _ in PageEndpoints.asset(PageAssets.js, type: "text/javascript; charset=utf-8") }
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        return router
    }
}
