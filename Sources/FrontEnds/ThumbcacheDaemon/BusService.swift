import CThumbcacheBus
import Glibc
import Thumbcache
import ThumbcacheRemote
import ThumbcacheSync

/// `thumbcache daemon`: the thumbnail service and the cache operations on the session bus, as
/// `org.freedesktop.thumbnails.Thumbnailer1` and `.Cache1` (the names tumblerd takes).
package enum BusService {
    package struct Options: Sendable {
        /// The bus to serve on; nil: the session bus.
        package var address: String?
        /// Exit after this many seconds with nothing to do (when started by D-Bus activation).
        package var idleExit: Double?
        /// Take the names from a running thumbnailer (tumblerd) instead of failing.
        package var replace: Bool

        package init(address: String? = nil, idleExit: Double? = nil, replace: Bool = false) {
            self.address = address
            self.idleExit = idleExit
            self.replace = replace
        }
    }

    /// Why the service could not start or ended.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// What the C loop's callbacks reach; only ever used on the thread inside `cbus_run`.
    private final class Context {
        let service: ThumbnailService
        let operations: StandardCacheOperations
        let idleExit: Double?
        let session: SessionServer?
        var bus: OpaquePointer?

        init(service: ThumbnailService, operations: StandardCacheOperations, idleExit: Double?, session: SessionServer?) {
            self.service = service
            self.operations = operations
            self.idleExit = idleExit
            self.session = session
        }
    }

    /// Serves until idle past `options.idleExit`, or until the bus goes away.
    package static func run(_ options: Options, thumbnailer: StandardThumbnailer, operations: StandardCacheOperations, workers: Int,
                            mimeTypes: [String], session: SessionServer? = nil, log: @escaping @Sendable (String) -> Void) throws(Failure) {
        let wake = cbus_new_wake_fd()
        guard wake >= 0 else { throw Failure(description: "eventfd: \(Errno.current)") }
        defer { close(wake) }
        cbus_stop_on_signals(wake)
        let service = ThumbnailService(
            thumbnailer: thumbnailer, workers: workers,
            notify: { cbus_wake(wake) },
            log: { handle, t in
                log("request \(handle) finished: \(t.uris) uris, \(t.alreadyValid + t.fromStore + t.made) ready (\(t.made) made, \(t.fromStore) from the cache, \(t.alreadyValid) already valid), \(t.failed) failed")
            })
        defer { service.stop() }
        let context = Context(service: service, operations: operations, idleExit: options.idleExit, session: session)
        var handlers = cbus_handlers(queue: queue, dequeue: dequeue, cache: cache, drain: drain, tick: tick)
        var message = [CChar](repeating: 0, count: 512)
        let opaque = Unmanaged.passUnretained(context).toOpaque()
        let bus = withCStrings(["file"]) { schemes in
            withCStrings(mimeTypes) { mimes in
                cbus_open(options.address, &handlers, opaque, schemes.baseAddress, schemes.count, mimes.baseAddress, mimes.count,
                          options.replace ? 1 : 0, wake, &message, message.count)
            }
        }
        guard let bus else { throw Failure(description: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        defer { cbus_close(bus) }
        context.bus = bus
        log("serving org.freedesktop.thumbnails.Thumbnailer1 and Cache1 on \(options.address ?? "the session bus"), \(workers) workers")
        let status = withExtendedLifetime(context) { cbus_run(bus) }
        if status < 0 { throw Failure(description: "the bus connection ended: \(Errno(rawValue: -status))") }
    }

    private static func context(_ raw: UnsafeMutableRawPointer?) -> Context {
        Unmanaged<Context>.fromOpaque(raw!).takeUnretainedValue()
    }

    private static func strings(_ list: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> [String] {
        (0..<count).compactMap { list?[$0].map { String(cString: $0) } }
    }

    private static let queue: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UnsafePointer<CChar>?>?, Int, UnsafePointer<UnsafePointer<CChar>?>?, Int,
                                              UnsafePointer<CChar>?, UnsafePointer<CChar>?, UInt32, UnsafeMutablePointer<CChar>?, Int,
                                              UnsafeMutablePointer<CChar>?, Int) -> UInt32 = { raw, uris, uriCount, _, _, flavor, scheduler, dequeue, name, nameSize, message, messageSize in
        let c = context(raw)
        do {
            return try c.service.queue(uris: strings(uris, uriCount), flavor: flavor.map { String(cString: $0) } ?? "normal",
                                       scheduler: scheduler.map { String(cString: $0) } ?? "default", dequeue: dequeue)
        } catch let refusal as ThumbnailService.Refusal {
            copy(refusal.name, into: name, size: nameSize)
            copy(refusal.message, into: message, size: messageSize)
            return 0
        } catch {
            copy("\(error)", into: message, size: messageSize)
            return 0
        }
    }

    private static let dequeue: @convention(c) (UnsafeMutableRawPointer?, UInt32) -> Void = { raw, handle in
        context(raw).service.dequeue(handle)
    }

    private static let cache: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<UnsafePointer<CChar>?>?, Int,
                                              UnsafePointer<UnsafePointer<CChar>?>?, Int, UInt32) -> Void = { raw, kind, from, fromCount, to, toCount, since in
        let operations = context(raw).operations
        switch kind {
        case 0: operations.move(from: strings(from, fromCount), to: strings(to, toCount))
        case 1: operations.move(from: strings(from, fromCount), to: strings(to, toCount), keepOriginal: true)
        case 2: operations.delete(strings(from, fromCount))
        default: operations.cleanup(baseURIs: strings(from, fromCount), since: since)
        }
    }

    private static let drain: @convention(c) (UnsafeMutableRawPointer?) -> Void = { raw in
        let c = context(raw)
        guard let bus = c.bus else { return }
        for event in c.service.takeEvents() {
            switch event {
            case .started(let h): cbus_emit_started(bus, h)
            case .finished(let h): cbus_emit_finished(bus, h)
            case .ready(let h, let uris): _ = withCStrings(uris) { cbus_emit_ready(bus, h, $0.baseAddress, $0.count) }
            case .error(let h, let uris, let code, let text): _ = withCStrings(uris) { cbus_emit_error(bus, h, $0.baseAddress, $0.count, code, text) }
            }
        }
    }

    private static let tick: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { raw in
        let c = context(raw)
        guard let idle = c.idleExit else { return 0 }
        return c.service.isIdle(for: idle) && c.session?.isIdle(for: idle) != false ? 1 : 0
    }

    private static func copy(_ text: String, into buffer: UnsafeMutablePointer<CChar>?, size: Int) {
        guard let buffer, size > 0 else { return }
        let bytes = Array(text.utf8.prefix(size - 1))
        for (i, b) in bytes.enumerated() { buffer[i] = CChar(bitPattern: b) }
        buffer[bytes.count] = 0
    }
}

/// Calls `body` with C strings of `list` (valid only inside it).
func withCStrings<R>(_ list: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
    let owned = list.map { strdup($0) }
    defer { owned.forEach { free($0) } }
    return owned.map { UnsafePointer($0) }.withUnsafeBufferPointer(body)
}

extension BusService {
    /// Serves with thumbcache's store at `store`, the standard cache at `cache`, making thumbnails
    /// with `providers` where `isolation` says, `workers` at a time; Cache1 also keeps `index` in step.
    /// With a `remote`, a miss asks it before decoding, and what is made is uploaded in the background.
    package static func run(_ options: Options, store: ThumbnailStore, index: MetadataIndex?, cache: FreedesktopThumbnailCache,
                            providers: [any ThumbnailProvider], types: ContentTypeRegistry, isolation: DecoderIsolation, workers: Int,
                            remote: RemoteCache? = nil, log: @escaping @Sendable (String) -> Void) throws(Failure) {
        let factory = ThumbnailFactory(store: store, types: types, providers: providers)
        let decoding = isolation.makeDecoding(defaultWorkers: workers, forBatches: true)
        let writer = GroupCommitWriter(store: store)
        let uploader = remote.map { RemoteUploader(store: store, remote: $0) }
        defer {
            writer.close()
            _ = uploader?.finish(waiting: true)
        }
        let thumbnailer = StandardThumbnailer(factory: factory, decoding: decoding, cache: cache, writer: writer, remote: remote)
        let operations = StandardCacheOperations(cache: cache, store: store, index: index, types: types, decoding: decoding)
        let mimeTypes = Set(providers.flatMap(\.contentTypes).compactMap { types.mimeType(of: $0) }).sorted()
        // As a `get` with its default options makes it (which alone asks here): no remote tier.
        let session = openSession(store: store, log: log) {
            ThumbnailGenerator(store: store, providers: providers, types: types, decoding: decoding, standardThumbnails: cache, remote: nil)
        }
        defer { session?.stop() }
        try run(options, thumbnailer: thumbnailer, operations: operations, workers: workers, mimeTypes: mimeTypes, session: session, log: log)
    }

    /// The socket through which `get` asks this daemon (``SessionSocket``), answering with the same
    /// workers as the bus; nil, said in the log, when there is no runtime directory or another
    /// daemon answers for this store.
    private static func openSession(store: ThumbnailStore, log: @Sendable (String) -> Void, generator: () -> ThumbnailGenerator) -> SessionServer? {
        guard let path = SessionSocket.path(forStoreAt: store.directory) else {
            log("no $XDG_RUNTIME_DIR (or too long a path in it): `get` will not ask this daemon")
            return nil
        }
        do {
            let session = try SessionServer(path: path, generator: generator())
            session.start()
            log("answering `get` at \(path)")
            return session
        } catch {
            log("`get` will not ask this daemon: \(error)")
            return nil
        }
    }
}
