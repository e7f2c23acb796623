// swift-tools-version: 6.1
import PackageDescription

/// The programs the multi-process tests run: the CLI, each family's worker, the hostile test worker.
let programs: [Target.Dependency] = ["thumbcache", "thumbcache-worker", "thumbcache-worker-documents", "thumbcache-worker-media",
                                     "thumbcache-worker-vector", "thumbcache-worker-heavy", "thumbcache-thumbnailer", "thumbcache-test-worker"]

let package = Package(
    name: "thumbcache",
    products: [
        .library(name: "ThumbcacheStore", targets: ["ThumbcacheStore"]),
        .library(name: "ThumbcacheImaging", targets: ["ThumbcacheImaging"]),
        .library(name: "ThumbcacheIndex", targets: ["ThumbcacheIndex"]),
        .library(name: "Thumbcache", targets: ["Thumbcache"]),
        // The C API (thumbcache.h) as a shared library: Tools/package installs it as libthumbcache.so.1.
        .library(name: "ThumbcacheC", type: .dynamic, targets: ["ThumbcacheC"]),
        .executable(name: "thumbcache", targets: ["thumbcache"]),
        .executable(name: "thumbcache-worker", targets: ["thumbcache-worker"]),
        .executable(name: "thumbcache-worker-documents", targets: ["thumbcache-worker-documents"]),
        .executable(name: "thumbcache-worker-media", targets: ["thumbcache-worker-media"]),
        .executable(name: "thumbcache-worker-vector", targets: ["thumbcache-worker-vector"]),
        .executable(name: "thumbcache-worker-heavy", targets: ["thumbcache-worker-heavy"]),
        .executable(name: "thumbcache-thumbnailer", targets: ["thumbcache-thumbnailer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // FilePath, which public API accepts beside String and URL.
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        // `thumbcache serve`'s HTTP server; no traits (swift-configuration, full Foundation) needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // NIOCore and NIOHTTPTypes: `serve` answers thumbnails held in memory in a channel handler.
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.27.0"),
    ],
    targets: [
        // C libraries from Debian, bound through module maps only.
        .systemLibrary(name: "CThumbcacheLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        // XXH3 compiled inline from Debian's xxhash.h (libxxhash-dev), plus a SIGBUS-guarded update
        // for mapped files; only prefixed functions are exposed.
        .target(name: "CThumbcacheXXHash"),

        // libpng and libjpeg(-turbo) behind C shims that own every setjmp.
        // A library loaded with dlopen when first needed, its functions resolved into a shim's table.
        .target(name: "CThumbcacheLibraries"),
        .target(name: "CThumbcachePNG", linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("isal"), .linkedLibrary("z")]),
        .target(name: "CThumbcacheJPEG", dependencies: ["CThumbcacheProcess"], linkerSettings: [.linkedLibrary("jpeg")]),

        // Each format's Debian library, bound through a module map (Docs/IMAGING.md, Docs/LICENSES.md).
        .systemLibrary(name: "CThumbcacheWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CThumbcacheGIF", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CThumbcacheHEIF", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        // libde265, dav1d and FFmpeg's HEVC decoder behind shims that load them at the first HEIC
        // or AVIF (not linked).
        .target(name: "CThumbcacheDe265", dependencies: ["CThumbcacheLibraries"]),
        .target(name: "CThumbcacheDav1d", dependencies: ["CThumbcacheLibraries"]),
        .target(name: "CThumbcacheAVCodec", dependencies: ["CThumbcacheLibraries"]),
        .systemLibrary(name: "CThumbcacheRSVG", pkgConfig: "librsvg-2.0", providers: [.apt(["librsvg2-dev"])]),
        // librsvg and cairo behind a shim that keeps GLib's types out of Swift.
        .target(name: "CThumbcacheSVG", dependencies: ["CThumbcacheRSVG"]),
        .systemLibrary(name: "CThumbcacheJXL", pkgConfig: "libjxl", providers: [.apt(["libjxl-dev"])]),
        // LibRaw, and libtiff behind a shim that owns its error handlers and reads by pread, never
        // mapped: both loaded at their first file (dlopen), so an image worker starts without them.
        .target(name: "CThumbcacheRaw", dependencies: ["CThumbcacheLibraries"]),
        .target(name: "CThumbcacheTIFF", dependencies: ["CThumbcacheLibraries"]),
        // poppler's C++ binding (Splash, as pdftoppm draws) behind a C interface; loaded at the
        // first PDF (dlopen), so a documents worker starts without it for text, fonts and e-books.
        .target(name: "CThumbcachePDF", dependencies: ["CThumbcacheLibraries"]),
        // libarchive behind a shim that lists an archive in memory and reads one entry, capped.
        .target(name: "CThumbcacheArchive", dependencies: ["CThumbcacheLibraries"]),
        // QOI's reference implementation (Debian's header-only qoi.h, libqoi-dev), compiled once here.
        .target(name: "CThumbcacheQOI"),
        // FreeType (libfreetype-dev) behind a shim that draws a page of text or a font's sample into
        // RGBA, loaded at the first text or font (dlopen), not linked: its headers only, where
        // every distribution puts them (a system library's pkg-config would link it).
        .target(name: "CThumbcacheText", dependencies: ["CThumbcacheLibraries"], cSettings: [.unsafeFlags(["-I/usr/include/freetype2"])]),
        // FFmpeg (libavformat, libavcodec, libswscale; GPL as Debian builds it) behind a shim that
        // reads by pread and keeps FFmpeg's structures out of Swift.
        .target(name: "CThumbcacheVideo", linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil"),
                                                 .linkedLibrary("swscale")]),

        // ICU's word breaking (with its dictionaries for scripts written without spaces) and folding,
        // behind a shim: ICU's function names carry its version, which Swift cannot call through macros.
        // Loaded with dlopen on first use (libicu-dev for the headers), not linked: a start that needs no words
        // does not load it.
        .target(name: "CThumbcacheWords", dependencies: ["CThumbcacheLibraries"]),
        // zstd (libzstd-dev): the full-text index keeps each document's text compressed, for snippets.
        .systemLibrary(name: "CThumbcacheZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),

        // The C API's header (thumbcache.h, installed by the -dev package) and each thread's last error message.
        .target(name: "CThumbcacheAPI"),

        // Idle CPU and I/O priority for background work (ioprio_set has no libc wrapper).
        .target(name: "CThumbcacheProcess"),
        .target(name: "CThumbcacheEarlyStart", dependencies: ["CThumbcacheProcess", "CThumbcachePDF"]),
        // Extended attributes and birth times (lgetxattr, statx), which Swift's Glibc does not export.
        .target(name: "CThumbcacheFileInfo"),
        // Descriptor passing over Unix sockets (SCM_RIGHTS), whose cmsg macros Swift cannot call.
        .target(name: "CThumbcacheDescriptors"),
        // sd-bus (libsystemd) behind a shim that owns the bus, the thumbnail service's vtables and its loop;
        // loaded with dlopen when a bus is opened (libsystemd-dev for the headers), not linked.
        .target(name: "CThumbcacheBus", dependencies: ["CThumbcacheLibraries"]),
        // libcurl (HTTP with kept-alive connections, TLS with the system's trust store) and
        // libcrypto's SHA-256 and HMAC, for the remote tier's S3 client and its signatures;
        // loaded with dlopen on first use (libcurl4-openssl-dev for the headers), not linked.
        .target(name: "CThumbcacheHTTP", dependencies: ["CThumbcacheLibraries"]),
        // libmemcached (consistent hashing over memcached servers), likewise loaded on first use.
        .target(name: "CThumbcacheMemcached", dependencies: ["CThumbcacheLibraries"]),
        // The worker's confinement: no_new_privs, rlimits, namespaces, a seccomp allow-list
        // (libseccomp). Linked into the worker executables only, never into the library.
        .target(name: "CThumbcacheSandbox", linkerSettings: [.linkedLibrary("seccomp")]),

        // Locks, guarded state, threads, the monotonic clock and system-call helpers (Errno, EINTR) the
        // other modules share.
        .target(name: "ThumbcacheSync", dependencies: ["CThumbcacheProcess", .product(name: "SystemPackage", package: "swift-system")]),
        // `URL` as a `FileLocation`, apart from ThumbcacheSync so that the workers link no Foundation.
        .target(name: "ThumbcacheFileURL", dependencies: ["ThumbcacheSync"]),

        // A thin, typed wrapper over LMDB: environments, scoped transactions, cursors. Package API:
        // apps reach LMDB only through the store and the index.
        .target(name: "ThumbcacheLMDB", dependencies: ["CThumbcacheLMDB"]),
        // The content-addressed thumbnail store: hashing, stat cache, records, group commit.
        .target(name: "ThumbcacheStore", dependencies: ["ThumbcacheLMDB", "CThumbcacheXXHash", "ThumbcacheSync", "ThumbcacheFileURL"]),
        // The Spotlight-like metadata index and its query language; independent of thumbnails.
        .target(name: "ThumbcacheIndex", dependencies: ["ThumbcacheLMDB", "ThumbcacheSync", "ThumbcacheFileURL", "CThumbcacheXXHash", "CThumbcacheWords",
                                                        "CThumbcacheZstd"]),
        // Decoding, EXIF, resizing and encoding images; independent of the store.
        .target(name: "ThumbcacheImaging", dependencies: ["CThumbcachePNG", "CThumbcacheJPEG", "ThumbcacheSync"]),
        // Every decoder beyond PNG and JPEG, in five families, each linked into its own worker
        // executable only, never into the library an app links (libheif pulls in GPL x265; poppler
        // and FFmpeg are GPL). A worker loads only its family's libraries: loading them all, FFmpeg's
        // above all, was most of a worker's start (Docs/SECURITY.md, "Worker families").
        // What the families share: mapped files, drawn sources, the shims' error messages.
        .target(name: "ThumbcacheCodecSupport", dependencies: ["ThumbcacheImaging", "ThumbcacheSync"]),
        // Images: WebP, GIF, TIFF, HEIF/AVIF (libavcodec or libde265, dav1d), camera raw, QOI, BMP/ICO/PNM/TGA.
        .target(name: "ThumbcacheCodecs", dependencies: ["ThumbcacheCodecSupport", "ThumbcacheImaging", "ThumbcacheSync", "CThumbcacheWebP", "CThumbcacheGIF", "CThumbcacheTIFF",
                                                         "CThumbcacheDe265", "CThumbcacheDav1d", "CThumbcacheAVCodec", "CThumbcacheRaw", "CThumbcacheQOI"]),
        // The image libraries slowest to load: libheif (with x265 and libaom) for the HEIF the
        // direct path hands on, libjxl (with highway) for JPEG XL.
        .target(name: "ThumbcacheHeavyCodecs", dependencies: ["ThumbcacheCodecSupport", "ThumbcacheImaging", "CThumbcacheHEIF", "CThumbcacheJXL"]),
        // Vector images: SVG through librsvg, whose cairo, pango and GLib are the heaviest load of any image library.
        .target(name: "ThumbcacheVectorCodecs", dependencies: ["ThumbcacheCodecSupport", "ThumbcacheImaging", "CThumbcacheSVG"]),
        // Documents: PDF, text, fonts, archive-borne documents (OpenDocument, OOXML, EPUB, comics).
        .target(name: "ThumbcacheDocumentCodecs", dependencies: ["ThumbcacheCodecSupport", "ThumbcacheImaging", "ThumbcacheSync", "CThumbcachePDF", "CThumbcacheText", "CThumbcacheArchive"]),
        // Media: video and audio through FFmpeg.
        .target(name: "ThumbcacheMediaCodecs", dependencies: ["ThumbcacheCodecSupport", "ThumbcacheImaging", "ThumbcacheSync", "CThumbcacheVideo"]),
        // Decoding in a pool of sandboxed worker processes: the protocol, the pool, the worker's loop.
        .target(name: "ThumbcacheWorker", dependencies: ["ThumbcacheImaging", "ThumbcacheSync", "CThumbcacheDescriptors", "CThumbcacheProcess"]),
        // The worker executables' entry: confine (CThumbcacheSandbox), then serve.
        .target(name: "ThumbcacheSandbox", dependencies: ["CThumbcacheSandbox", "CThumbcacheProcess", "ThumbcacheWorker", "ThumbcacheImaging", "ThumbcacheSync"]),
        // The shared tier behind the store: thumbnails by content key in S3-compatible storage,
        // checked on the way in, uploaded write-behind from a queue in the store (Docs/REMOTE.md).
        .target(name: "ThumbcacheRemote", dependencies: ["ThumbcacheStore", "ThumbcacheImaging", "ThumbcacheSync", "CThumbcacheHTTP",
                                                             "CThumbcacheMemcached"]),
        // Thumbnail generation after QuickLook: content types, providers, the generator, warming.
        .target(
            name: "Thumbcache",
            dependencies: ["ThumbcacheStore", "ThumbcacheImaging", "ThumbcacheIndex", "ThumbcacheSync", "ThumbcacheFileURL", "ThumbcacheWorker",
                           "ThumbcacheRemote", "CThumbcacheFileInfo", "CThumbcacheProcess"]
        ),

        // The desktop daemon: the org.freedesktop.thumbnails Thumbnailer1 and Cache1 services on the
        // session bus (a drop-in for tumblerd), its request scheduler and workers.
        .target(name: "ThumbcacheDaemon", dependencies: ["Thumbcache", "ThumbcacheRemote", "ThumbcacheSync", "CThumbcacheBus", "CThumbcacheDescriptors"]),

        // `thumbcache serve`: thumbnails by content hash, search, info and tags over HTTP, and the
        // page that browses them (Hummingbird 2).
        .target(name: "ThumbcacheServer", dependencies: ["Thumbcache", "ThumbcacheStore", "ThumbcacheSync", "CThumbcacheFileInfo", "CThumbcacheDescriptors",
                                                         .product(name: "Hummingbird", package: "hummingbird"),
                                                         .product(name: "HummingbirdCore", package: "hummingbird"),
                                                         .product(name: "Logging", package: "swift-log"),
                                                         .product(name: "HTTPTypes", package: "swift-http-types"),
                                                         .product(name: "NIOCore", package: "swift-nio"),
                                                         .product(name: "NIOHTTP1", package: "swift-nio"),
                                                         .product(name: "NIOPosix", package: "swift-nio"),
                                                         .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                                                         .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras")]),

        // The C API over the library, for C, Python's ctypes and any other FFI: open, get, warm, search.
        .target(name: "ThumbcacheC", dependencies: ["Thumbcache", "ThumbcacheSync", "CThumbcacheAPI"]),

        // The command-line tool; its commands only call the library. It starts the worker programs
        // to decode, and does not depend on them: an executable that depends on another links its
        // code and every library it links (FFmpeg, libheif…), which would make the tool GPL and
        // cost 40 ms of loading at each start. `swift build` builds both. The one exception is
        // the documents family, whose worker a one-file call forks (Docs/SECURITY.md): its
        // libraries (poppler, FreeType, libarchive) are loaded with dlopen in that child only.
        .executableTarget(
            name: "thumbcache",
            dependencies: ["Thumbcache", "ThumbcacheDaemon", "ThumbcacheServer", "ThumbcacheSync", "ThumbcacheWorker", "CThumbcacheProcess", "CThumbcacheEarlyStart",
                           "CThumbcacheDescriptors", "ThumbcacheSandbox", "ThumbcacheDocumentCodecs",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The sandboxed decoder processes, one per family (GPL-licensed decoders link here only:
        // Docs/LICENSES.md).
        .executableTarget(name: "thumbcache-worker", dependencies: ["ThumbcacheSandbox", "ThumbcacheImaging", "ThumbcacheCodecs", "ThumbcachePlugIn"]),
        .executableTarget(name: "thumbcache-worker-documents", dependencies: ["ThumbcacheSandbox", "ThumbcacheImaging", "ThumbcacheDocumentCodecs"]),
        .executableTarget(name: "thumbcache-worker-media", dependencies: ["ThumbcacheSandbox", "ThumbcacheImaging", "ThumbcacheMediaCodecs"]),
        .executableTarget(name: "thumbcache-worker-vector", dependencies: ["ThumbcacheSandbox", "ThumbcacheImaging", "ThumbcacheVectorCodecs"]),
        .executableTarget(name: "thumbcache-worker-heavy", dependencies: ["ThumbcacheSandbox", "ThumbcacheImaging", "ThumbcacheHeavyCodecs"]),
        // What the .thumbnailer plug-in runs per file without a cache: the image and documents
        // workers' code and no Foundation, so it starts in a third of thumbcache's time and forks
        // its worker for an image, a PDF or a font.
        // The image worker's program answers the same calls; the package installs it under both names.
        .target(name: "ThumbcachePlugIn", dependencies: ["CThumbcacheEarlyStart", "ThumbcacheSandbox", "ThumbcacheWorker", "ThumbcacheImaging", "ThumbcacheCodecs", "ThumbcacheDocumentCodecs",
                                                  "ThumbcacheSync"]),
        .executableTarget(name: "thumbcache-thumbnailer", dependencies: ["ThumbcachePlugIn"]),
        // A worker of every family with hostile test decoders (crash, hang, allocate, create files,
        // connect, exec); built for the tests only, never a product.
        .executableTarget(name: "thumbcache-test-worker", dependencies: ["ThumbcacheSandbox", "ThumbcacheImaging", "ThumbcacheCodecs",
                                                                         "ThumbcacheDocumentCodecs", "ThumbcacheMediaCodecs",
                                                                         "ThumbcacheVectorCodecs", "ThumbcacheHeavyCodecs"]),
        // A small program the multi-process tests start, write into and kill.
        .executableTarget(name: "thumbcache-probe", dependencies: ["ThumbcacheStore", "ThumbcacheIndex", "ThumbcacheLMDB", "ThumbcacheTestSupport"]),

        // Fixtures shared by the test targets: temporary directories, child processes.
        .target(name: "ThumbcacheTestSupport", dependencies: ["ThumbcacheStore", "ThumbcacheImaging", "ThumbcacheSync", "CThumbcacheProcess"]),
        // PNGs of every colour type, depth, filter and chunking, written by libpng for the PNG reader's tests.
        .target(name: "CThumbcacheTestPNG", linkerSettings: [.linkedLibrary("png16")]),
        .target(name: "CThumbcacheTestProcess", dependencies: ["CThumbcacheProcess"]),
        .testTarget(name: "ThumbcacheLMDBTests", dependencies: ["ThumbcacheLMDB", "CThumbcacheLMDB", "ThumbcacheTestSupport"]),
        .testTarget(
            name: "ThumbcacheIndexTests",
            dependencies: ["ThumbcacheIndex", "ThumbcacheLMDB", "ThumbcacheTestSupport", "thumbcache-probe"],
            exclude: ["Fixtures"]  // an index written by an older format version (see its README)
        ),
        .testTarget(name: "ThumbcacheImagingTests", dependencies: ["ThumbcacheImaging", "ThumbcacheTestSupport", "CThumbcacheTestPNG", "CThumbcachePNG"]),
        // The library's generation, warming, watching and freedesktop cache, through the real CLI and workers.
        .testTarget(name: "ThumbcacheTests", dependencies: ["Thumbcache", "ThumbcacheIndex", "ThumbcacheImaging", "ThumbcacheLMDB", "ThumbcacheStore", "ThumbcacheSync",
                                                            "ThumbcacheTestSupport", "CThumbcacheFileInfo"] + programs),
        // The format catalogue against each worker's decoders; every format through the real worker
        // (fixtures made by Debian's encoders), hostile files, fuzz regressions.
        .testTarget(
            name: "ThumbcacheCodecsTests",
            dependencies: ["Thumbcache", "ThumbcacheImaging", "ThumbcacheIndex", "ThumbcacheStore", "ThumbcacheWorker", "ThumbcacheCodecSupport", "ThumbcacheCodecs", "ThumbcacheHeavyCodecs",
                           "ThumbcacheVectorCodecs", "ThumbcacheDocumentCodecs", "ThumbcacheMediaCodecs", "ThumbcacheTestSupport",
                           "CThumbcacheQOI"] + programs,
            exclude: ["FuzzRegressions"]  // inputs FuzzRegressionTests reads from the source tree
        ),
        // The worker pool and its sandbox, with the hostile test worker.
        .testTarget(name: "ThumbcacheWorkerTests", dependencies: ["Thumbcache", "ThumbcacheImaging", "ThumbcacheWorker", "ThumbcacheCodecs",
                                                                  "ThumbcacheSync", "ThumbcacheTestSupport", "CThumbcacheTestProcess"] + programs),
        // `thumbcache serve` over real sockets (and a headless browser).
        .testTarget(name: "ThumbcacheServerTests", dependencies: ["Thumbcache", "ThumbcacheServer", "ThumbcacheImaging", "ThumbcacheSync",
                                                                  "ThumbcacheTestSupport", "CThumbcacheFileInfo",
                                                                  .product(name: "NIOCore", package: "swift-nio")] + programs),
        // The tumblerd drop-in on a private D-Bus session bus.
        .testTarget(name: "ThumbcacheDaemonTests", dependencies: ["Thumbcache", "ThumbcacheDaemon", "CThumbcacheDescriptors", "ThumbcacheSync", "ThumbcacheTestSupport"] + programs),
        // An app's view: only `import Thumbcache`, no test support, no internals.
        .testTarget(
            name: "ThumbcacheAppTests",
            dependencies: ["Thumbcache", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // The C API and the Python module, from a C program and Python scripts over the shared library.
        .testTarget(name: "ThumbcacheBindingTests", dependencies: ["ThumbcacheImaging", "ThumbcacheTestSupport", "ThumbcacheC"] + programs),
        // The remote tier against a real SeaweedFS cluster each test starts on loopback.
        .testTarget(name: "ThumbcacheRemoteTests", dependencies: ["ThumbcacheRemote", "ThumbcacheStore", "ThumbcacheImaging", "ThumbcacheTestSupport",
                                                                  "thumbcache", "thumbcache-worker"]),
        .testTarget(
            name: "ThumbcacheStoreTests",
            dependencies: ["ThumbcacheStore", "ThumbcacheLMDB", "ThumbcacheTestSupport", "thumbcache-probe", "CThumbcacheXXHash"]
        ),
    ]
)

// The folder tree shows the layers, bottom up (Docs/ARCHITECTURE.md, "Layout"): every target
// lives in Sources/LAYER/NAME, and a new target must be given a layer here.
let layers: [(folder: String, targets: [String])] = [
    // C libraries from Debian: module maps and shims, each named CThumbcache… so that no other
    // package's module (apple/swift-lmdb's CLMDB) can clash with one. CThumbcacheTest… are the tests'.
    ("C", package.targets.map(\.name).filter { $0.hasPrefix("CThumbcache") && !$0.hasPrefix("CThumbcacheTest") }),
    // What everything stands on: system calls and locks, LMDB, the store, the index, imaging and the format catalogue.
    ("Core", ["ThumbcacheSync", "ThumbcacheFileURL", "ThumbcacheLMDB", "ThumbcacheStore", "ThumbcacheIndex", "ThumbcacheImaging"]),
    // Decoders beyond PNG and JPEG, one module per worker family.
    ("Codecs", ["ThumbcacheCodecSupport", "ThumbcacheCodecs", "ThumbcacheHeavyCodecs", "ThumbcacheVectorCodecs",
                "ThumbcacheDocumentCodecs", "ThumbcacheMediaCodecs"]),
    // Decoding in sandboxed processes: the pool and protocol, the confinement, a program per family,
    // and the plug-in's program, which forks its image worker.
    ("Workers", ["ThumbcacheWorker", "ThumbcacheSandbox", "ThumbcachePlugIn", "thumbcache-worker", "thumbcache-worker-documents",
                 "thumbcache-worker-media", "thumbcache-worker-vector", "thumbcache-worker-heavy", "thumbcache-thumbnailer"]),
    // What an app links beyond the core: generation after QuickLook, warming, the remote tier.
    ("Library", ["Thumbcache", "ThumbcacheRemote"]),
    // The programs people run: the CLI, the desktop daemon, the HTTP server.
    ("FrontEnds", ["thumbcache", "ThumbcacheDaemon", "ThumbcacheServer"]),
    // The library for other languages: the C API, and the Python module over it (in python/, not a target).
    ("Bindings", ["ThumbcacheC"]),
    // Built for the tests only.
    ("Testing", ["ThumbcacheTestSupport", "CThumbcacheTestPNG", "CThumbcacheTestProcess", "thumbcache-probe", "thumbcache-test-worker"]),
]
for target in package.targets where target.type != .test {
    guard let layer = layers.first(where: { $0.targets.contains(target.name) }) else {
        fatalError("Package.swift: target \(target.name) has no layer; add it to `layers`")
    }
    target.path = "Sources/\(layer.folder)/\(target.name)"
}
