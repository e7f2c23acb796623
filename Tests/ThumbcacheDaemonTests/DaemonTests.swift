import Foundation
import Testing
import ThumbcacheSync
import ThumbcacheTestSupport
@testable import Thumbcache
import CThumbcacheDescriptors
@testable import ThumbcacheDaemon

/// `thumbcache daemon` on a private session bus (its own `dbus-daemon`), asked by a real client
/// (python3-dbus, Tools/thumbnail-bus-client) as Thunar asks tumblerd.
@Suite(.serialized)
struct DaemonTests {
    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/thumbnail-bus-client").path

    struct Reply: Decodable {
        var handle: UInt32
        var started: Bool
        var ready: [String]
        var errors: [[Either]]
        var finished: Bool

        var failedURIs: [String] { errors.flatMap { $0.first?.uris ?? [] } }
        var codes: [Int] { errors.compactMap { $0.count > 1 ? $0[1].code : nil } }
    }

    /// An Error signal's fields: the URIs, the code, the message.
    enum Either: Decodable {
        case uris([String]), code(Int), message(String)
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let u = try? c.decode([String].self) { self = .uris(u) } else if let n = try? c.decode(Int.self) { self = .code(n) } else {
                self = .message(try c.decode(String.self))
            }
        }
        var uris: [String]? { if case .uris(let u) = self { u } else { nil } }
        var code: Int? { if case .code(let n) = self { n } else { nil } }
    }

    /// A private bus and a daemon on it, stopped with the value.
    final class Service {
        let dir: TemporaryDirectory
        let bus: ChildProcess
        let address: String
        var daemon: ChildProcess
        var cache: FreedesktopThumbnailCache { FreedesktopThumbnailCache(directory: dir.appending("xdg/thumbnails")) }

        /// - Parameters:
        ///   - activated: start no daemon; the bus starts it from `dir/services` on the first call.
        ///   - waits: return once the daemon answers a call (a daemon that may leave within a
        ///     second of idling could be gone before a loaded machine's first call).
        init(_ dir: TemporaryDirectory, extra: [String] = [], activated: Bool = false, waits: Bool = true) throws {
            self.dir = dir
            bus = try Self.bus(dir, environment: activated ? ["XDG_CACHE_HOME": dir.appending("xdg")] : [:])
            address = try #require(bus.waitForLines(1, timeout: 10).first)
            daemon = activated ? bus : try Self.start(dir, address: address, extra: extra)
            if !activated && waits { try waitUntilServing() }
        }

        /// A session bus of its own whose only activatable services are those in `dir/services`:
        /// the system's (tumblerd's among them) would answer in the daemon's place.
        static func bus(_ dir: TemporaryDirectory, environment: [String: String]) throws -> ChildProcess {
            try FileManager.default.createDirectory(atPath: dir.appending("services"), withIntermediateDirectories: true)
            let config = try dir.write("bus.conf", Array("""
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:tmpdir=\(dir.path)</listen>
                  <auth>EXTERNAL</auth>
                  <servicedir>\(dir.appending("services"))</servicedir>
                  <policy context="default">
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                    <allow own="*"/>
                  </policy>
                </busconfig>
                """.utf8))
            return try ChildProcess(program: "/usr/bin/dbus-daemon", arguments: ["--config-file=\(config)", "--print-address", "--nofork", "--nopidfile"],
                                    environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        }

        static func start(_ dir: TemporaryDirectory, address: String, extra: [String]) throws -> ChildProcess {
            try FileManager.default.createDirectory(atPath: dir.appending("run"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CACHE_HOME"] = dir.appending("xdg")
            environment["XDG_RUNTIME_DIR"] = dir.appending("run")
            return try ChildProcess(program: "thumbcache", arguments: ["daemon", "--bus", address, "--cache", dir.appending("cache"), "--jobs", "2"] + extra,
                                    environment: environment)
        }

        func waitUntilServing() throws {
            for _ in 0..<100 {
                if (try? run(["call", "GetFlavors"])) != nil { return }
                usleep(50_000)
            }
            throw FixtureTools.ToolFailure(description: "the daemon did not come up: \(daemon.wait(timeout: 1).stderr)")
        }

        func run(_ arguments: [String]) throws -> String {
            try FixtureTools.run("DBUS_SESSION_BUS_ADDRESS=\(address)", ["/usr/bin/python3", DaemonTests.client] + arguments)
        }

        func queue(_ uris: [String], flavor: String = "normal", scheduler: String = "default", extra: [String] = []) throws -> Reply {
            let list = try dir.write("uris-\(UUID().uuidString)", Array(uris.joined(separator: "\n").utf8))
            return try JSONDecoder().decode(Reply.self, from: Data(try run(["queue", flavor, scheduler, list] + extra).utf8))
        }

        /// Stops the daemon and returns what it logged.
        func stopDaemon() -> String {
            daemon.kill(SIGTERM)
            return daemon.wait(timeout: 10).stderr
        }

        deinit {
            daemon.kill()
            _ = daemon.wait(timeout: 5)
            bus.kill()
            _ = bus.wait(timeout: 5)
        }
    }

    /// Where the daemon of the cache in `dir` answers `get` (its runtime folder under `dir`).
    static func sessionSocket(_ dir: TemporaryDirectory) throws -> String {
        try #require(SessionSocket.path(forStoreAt: dir.appending("cache"), runtimeDirectory: dir.appending("run")))
    }

    /// `count` small PNGs of distinct colours under `dir/name/`.
    static func pictures(_ dir: TemporaryDirectory, _ name: String, count: Int) throws -> [String] {
        try FileManager.default.createDirectory(atPath: dir.appending(name), withIntermediateDirectories: true)
        return try (0..<count).map { i in
            let pixel: [UInt8] = [UInt8(i % 256), UInt8(i / 256 * 60), 90, 255]
            let pixels = [[UInt8]](repeating: pixel, count: 48 * 32).flatMap { $0 }
            return try dir.write("\(name)/p\(i).png", ImageEncoder.png(RGBAImage(width: 48, height: 32, pixels: pixels, hasAlpha: false)))
        }
    }

    @Test func fiveHundredURIsInOneCallAreAnsweredAsTheInterfaceSays() throws {
        let dir = TemporaryDirectory()
        let good = try Self.pictures(dir, "tree", count: 480)
        let broken = try (0..<20).map { try dir.write("tree/broken\($0).png", [0x89, 0x50, 0x4E, 0x47] + Array(repeating: UInt8($0), count: 40)) }
        let service = try Service(dir)
        let uris = (good + broken).map { FileURI.of(path: $0) }.shuffled()
        let reply = try service.queue(uris + ["sftp://host/remote.png"])
        #expect(reply.started && reply.finished)
        #expect(Set(reply.ready) == Set(good.map { FileURI.of(path: $0) }))
        #expect(Set(reply.failedURIs) == Set(broken.map { FileURI.of(path: $0) } + ["sftp://host/remote.png"]))
        #expect(reply.codes.contains(0) && reply.codes.contains(2), "unsupported scheme, invalid format: \(reply.codes)")
        for path in good {
            let snapshot = try FileSnapshot.of(path: path)
            #expect(FreedesktopThumbnailCache.isValid(thumbnailAt: service.cache.path(forURI: FileURI.of(path: path), size: .normal),
                                                      for: .init(path: path, snapshot: snapshot)))
        }
        for path in broken { #expect(FileManager.default.fileExists(atPath: service.cache.failurePath(forURI: FileURI.of(path: path)))) }

        // Asked again: every thumbnail is valid already, answered without a worker.
        let again = try service.queue(good.map { FileURI.of(path: $0) })
        #expect(again.ready.count == good.count && again.finished)
        let log = service.stopDaemon()
        #expect(log.contains("request 1 finished: 501 uris, 480 ready (480 made, 0 from the cache, 0 already valid), 21 failed"), "\(log)")
        #expect(log.contains("request 2 finished: 480 uris, 480 ready (0 made, 0 from the cache, 480 already valid), 0 failed"), "\(log)")
    }

    @Test func dequeueStopsALargeRequestAndUnknownFlavorsAreRefused() throws {
        let dir = TemporaryDirectory()
        let pictures = try Self.pictures(dir, "tree", count: 400)
        let service = try Service(dir)
        let reply = try service.queue(pictures.map { FileURI.of(path: $0) }, flavor: "large", extra: ["--dequeue-after", "4"])
        #expect(reply.finished)
        #expect(reply.ready.count >= 4 && reply.ready.count < 100, "stopped early: \(reply.ready.count) of 400")
        #expect(throws: (any Error).self) { try service.run(["queue", "huge", "default", try dir.write("one", Array(FileURI.of(path: pictures[0]).utf8))]) }
        let flavors = try service.run(["call", "GetFlavors"])
        #expect(flavors.contains("xx-large"))
        let supported = try service.run(["call", "GetSupported"])
        #expect(supported.contains("\"file\"") && supported.contains("image/png") && supported.contains("application/pdf"))
        let schedulers = try service.run(["call", "GetSchedulers"])
        #expect(schedulers.contains("foreground") && schedulers.contains("background"))
    }

    @Test func aMovedFileIsAnsweredFromTheCacheWithoutDecoding() throws {
        let dir = TemporaryDirectory()
        let pictures = try Self.pictures(dir, "tree", count: 3)
        let service = try Service(dir)
        _ = try service.queue(pictures.map { FileURI.of(path: $0) })
        let moved = dir.appending("tree/renamed picture.png")
        try FileManager.default.moveItem(atPath: pictures[0], toPath: moved)
        let (from, to) = (FileURI.of(path: pictures[0]), FileURI.of(path: moved))
        let arguments = String(decoding: try JSONSerialization.data(withJSONObject: [[from], [to]]), as: UTF8.self)
        _ = try service.run(["cache", "Move", arguments])
        #expect(!FileManager.default.fileExists(atPath: service.cache.path(forURI: from, size: .normal)))
        let keys = try #require(PNGText.read(path: service.cache.path(forURI: to, size: .normal)))
        #expect(keys["Thumb::URI"] == to)
        let reply = try service.queue([to])
        #expect(reply.ready == [to])

        // Delete: the thumbnails of a file removed go too.
        try FileManager.default.removeItem(atPath: pictures[1])
        _ = try service.run(["cache", "Delete", String(decoding: try JSONSerialization.data(withJSONObject: [[FileURI.of(path: pictures[1])]]), as: UTF8.self)])
        #expect(!FileManager.default.fileExists(atPath: service.cache.path(forURI: FileURI.of(path: pictures[1]), size: .normal)))
        let log = service.stopDaemon()
        #expect(log.contains("request 2 finished: 1 uris, 1 ready (0 made, 0 from the cache, 1 already valid), 0 failed"), "\(log)")
    }

    @Test func anActivatedDaemonExitsWhenIdle() throws {
        let dir = TemporaryDirectory()
        let start = Date()
        let service = try Service(dir, extra: ["--idle-exit", "1"], waits: false)
        let (end, log) = service.daemon.wait(timeout: 20)
        #expect(end == .exited(0), "\(log)")
        #expect(log.contains("serving org.freedesktop.thumbnails.Thumbnailer1"), "it served before leaving: \(log)")
        #expect(Date().timeIntervalSince(start) < 10)
    }

    @Test func aSecondDaemonIsToldTheNamesAreTaken() throws {
        let dir = TemporaryDirectory()
        let service = try Service(dir)
        let second = try Service.start(dir, address: service.address, extra: [])
        let (end, log) = second.wait(timeout: 20)
        #expect(end == .exited(1))
        #expect(log.contains("owns org.freedesktop.thumbnails.Thumbnailer1"), "\(log)")
    }

    /// `thumbcache daemon install` writes the service files; the bus starts the daemon on the
    /// first call, and the daemon ends itself when idle.
    @Test func theBusStartsTheInstalledDaemonOnDemand() throws {
        let dir = TemporaryDirectory()
        let pictures = try Self.pictures(dir, "tree", count: 5)
        let install = try ChildProcess(program: "thumbcache", arguments: ["daemon", "install", "--idle-exit", "2", "--services-dir", dir.appending("services"),
                                                                         "--systemd-dir", dir.appending("systemd")])
        #expect(install.wait(timeout: 30).termination == .exited(0))
        let unit = try String(contentsOfFile: dir.appending("systemd/thumbcache-daemon.service"), encoding: .utf8)
        #expect(unit.contains("BusName=org.freedesktop.thumbnails.Thumbnailer1") && unit.contains("daemon --idle-exit 2"))
        let service = try Service(dir, activated: true)
        let reply = try service.queue(pictures.map { FileURI.of(path: $0) })
        #expect(reply.finished && reply.ready.count == 5)
        // Idle for its two seconds, it leaves: the names are free again.
        var gone = false
        for _ in 0..<100 where !gone {
            usleep(100_000)
            let owner = try? FixtureTools.run("DBUS_SESSION_BUS_ADDRESS=\(service.address)", [
                "gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                "--method", "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.thumbnails.Thumbnailer1"])
            gone = owner?.contains("false") ?? false
        }
        #expect(gone, "the activated daemon exited when idle")
    }
}
