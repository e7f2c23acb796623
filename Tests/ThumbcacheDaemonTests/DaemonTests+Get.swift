import Foundation
import Testing
import ThumbcacheSync
import ThumbcacheTestSupport
@testable import Thumbcache
import CThumbcacheDescriptors
@testable import ThumbcacheDaemon

/// `get` beside the daemon (asked, or done without it; the bus and ICU never loaded), the session
/// socket's checks, and a watching daemon (DaemonTests.swift has the service and the bus calls).
extension DaemonTests {
    /// `get` in the daemon's session: `--json` for its output.
    static func get(_ dir: TemporaryDirectory, _ file: String, extra: [String] = []) throws -> Written {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = dir.appending("xdg")
        environment["XDG_RUNTIME_DIR"] = dir.appending("run")
        let out = dir.appending("out-\(UUID().uuidString).png")
        let child = try ChildProcess(program: "thumbcache", arguments: ["get", file, "-o", out, "--size", "32", "--json", "--cache", dir.appending("cache")] + extra,
                                     environment: environment)
        let (end, stderr) = child.wait(timeout: 60)
        #expect(end == .exited(0), "\(stderr)")
        let image = try ImageDecoder.png(Array(Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(max(image.width, image.height) == 32)
        return try JSONDecoder().decode(Written.self, from: Data(child.output.joined(separator: "\n").utf8))
    }

    struct Written: Decodable {
        var fromCache: Bool
        var fromDaemon: Bool
        var kind: String
        var page: Int?
    }

    /// A process made for one file asks the running daemon (whose workers are already up) over its
    /// session socket, and makes the thumbnail itself with `--no-daemon` or once the daemon is gone.
    @Test func aGetAsksTheRunningDaemonAndDoesWithoutIt() throws {
        let dir = TemporaryDirectory()
        let pictures = try Self.pictures(dir, "tree", count: 4)
        let service = try Service(dir)
        let first = try Self.get(dir, pictures[0])
        #expect(first.fromDaemon && !first.fromCache)
        // What the daemon made is in the one store both use.
        var again = try Self.get(dir, pictures[0])
        for _ in 0..<20 where !again.fromCache {
            usleep(100_000)
            again = try Self.get(dir, pictures[0])
        }
        #expect(again.fromCache)
        // A file the daemon cannot make is declined, and the process's own attempt says why, with the path.
        let broken = try dir.write("broken.png", Array(try Data(contentsOf: URL(fileURLWithPath: pictures[3])).prefix(60)))
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = dir.appending("run")
        let failing = try ChildProcess(program: "thumbcache", arguments: ["get", broken, "-o", dir.appending("broken-out.png"), "--kind", "full",
                                                                         "--cache", dir.appending("cache")], environment: environment)
        let (failed, message) = failing.wait(timeout: 60)
        #expect(failed == .exited(1) && message.contains(broken), "\(failed) \(message)")
        let here = try Self.get(dir, pictures[1], extra: ["--no-daemon"])
        #expect(!here.fromDaemon && !here.fromCache)
        // A preview is asked the same way; a page the file does not have is declined, then refused here.
        let preview = try Self.get(dir, pictures[1], extra: ["--kind", "preview", "--page", "1"])
        #expect(preview.fromDaemon && preview.kind == "preview" && preview.page == 1)
        let past = try ChildProcess(program: "thumbcache", arguments: ["get", pictures[1], "-o", dir.appending("page-2.png"), "--kind", "preview",
                                                                      "--page", "2", "--cache", dir.appending("cache")], environment: environment)
        let (refused, why) = past.wait(timeout: 60)
        #expect(refused == .exited(1) && why.contains("no page 2: the file has 1 page"), "\(refused) \(why)")
        let socket = try Self.sessionSocket(dir)
        #expect(FileManager.default.fileExists(atPath: socket))
        let log = service.stopDaemon()
        #expect(log.contains("answering `get` at \(socket)"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: socket), "the daemon removes its socket when it ends")
        let alone = try Self.get(dir, pictures[2])
        #expect(!alone.fromDaemon && !alone.fromCache)
    }

    /// libsystemd and ICU are loaded when a bus or words need them, not at every start: a `get`
    /// (a miss made here, then a hit) loads neither, as the dynamic loader reports what it loads.
    /// The bus and the words working through the loaded libraries are the other tests' subject.
    @Test func aGetLoadsNeitherTheBusLibraryNorICU() throws {
        let dir = TemporaryDirectory()
        let picture = try Self.pictures(dir, "tree", count: 1)[0]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = dir.appending("xdg")
        environment["LD_DEBUG"] = "files"
        for run in ["miss", "hit"] {
            let child = try ChildProcess(program: "thumbcache", arguments: ["get", picture, "-o", dir.appending("\(run).png"), "--no-daemon",
                                                                           "--cache", dir.appending("cache")], environment: environment)
            let (end, loaderLog) = child.wait(timeout: 60)
            #expect(end == .exited(0), "\(run): \(loaderLog.suffix(2000))")
            #expect(loaderLog.contains("file=liblmdb.so.0"), "\(run): the loader's log lists what it loads")
            #expect(!loaderLog.contains("libsystemd.so") && !loaderLog.contains("libicuuc.so"), "\(run)")
        }
    }

    /// The daemon reads only what the asker could open: the descriptor sent must be the file named.
    @Test func theDaemonAnswersOnlyForTheFileWhoseDescriptorCame() throws {
        let dir = TemporaryDirectory()
        let pictures = try Self.pictures(dir, "tree", count: 2)
        let service = try Service(dir)
        let socket = try Self.sessionSocket(dir)
        let request = SessionSocket.Request(ThumbnailRequest(fileAt: pictures[0], size: 32))
        let other = open(pictures[1], O_RDONLY)
        defer { close(other) }
        switch SessionSocket.exchange(request, file: other, socketPath: socket) {
        case .success: Issue.record("answered for a file whose descriptor did not come")
        case .failure(let declined): #expect(declined.description.contains("is not the file whose descriptor came"), "\(declined)")
        }
        let own = open(pictures[0], O_RDONLY)
        defer { close(own) }
        let answer = try SessionSocket.exchange(request, file: own, socketPath: socket).get()
        #expect(answer.kind == .thumbnail && max(answer.pixelWidth, answer.pixelHeight) == 32)
        #expect(try answer.image().width == answer.pixelWidth)
        _ = service
    }

    /// A request that comes with more bytes than it says is declined, and the descriptor sent
    /// with it is closed, not kept: the daemon's open descriptors stay as many.
    @Test func aMalformedRequestLeavesNoDescriptorInTheDaemon() throws {
        let dir = TemporaryDirectory()
        let pictures = try Self.pictures(dir, "tree", count: 1)
        let service = try Service(dir)
        let socket = try Self.sessionSocket(dir)
        let request = SessionSocket.Request(ThumbnailRequest(fileAt: pictures[0], size: 32))
        let file = open(pictures[0], O_RDONLY)
        defer { close(file) }
        // One answered first: whatever the daemon opens once (its worker) is open before counting.
        _ = try SessionSocket.exchange(request, file: file, socketPath: socket).get()
        let descriptors = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(service.daemon.processIdentifier)/fd").count) ?? -1 }
        usleep(100_000)  // the answered connection's own descriptors closed
        let before = descriptors()
        for _ in 0..<10 {
            let connection = try UnixSocket.connect(to: socket).get()
            let bytes = request.encoded() + [0xFF]
            #expect(bytes.withUnsafeBytes { cdesc_send(connection, $0.baseAddress, $0.count, file) } == bytes.count)
            var answer = [UInt8](repeating: 0, count: 4096)
            while answer.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {}
            close(connection)
        }
        usleep(100_000)
        // Ten kept would be ten more; a daemon's own come and go by one or two.
        #expect(descriptors() < before + 5, "the daemon had \(before) descriptors open, then \(descriptors())")
    }

    /// `daemon --watch`: a file created in a watched tree gets its standard thumbnails without a
    /// request, decoded by workers at idle CPU priority (the D-Bus requests' stay as they are).
    @Test func aWatchingDaemonMakesTheThumbnailsOfNewFiles() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        let service = try Service(dir, extra: ["--watch", dir.appending("tree")])
        // Created before its watch is set, the initial warm (which follows the watch) finds it; after, the event.
        let picture = try Self.pictures(dir, "tree", count: 1)[0]
        let thumbnail = service.cache.path(forURI: FileURI.of(path: picture), size: .large)
        var valid = false
        for _ in 0..<200 where !valid {
            usleep(50_000)
            if let snapshot = try? FileSnapshot.of(path: picture) {
                valid = FreedesktopThumbnailCache.isValid(thumbnailAt: thumbnail, for: .init(path: picture, snapshot: snapshot))
            }
        }
        #expect(valid)
        // The watch's workers, the daemon's only children so far (no request came over the bus).
        let daemon = service.daemon.processIdentifier
        let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> [Substring]? in
            guard Int32(name) != nil, let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")  // state, ppid, … nice is the 17th
            return fields.count > 16 && fields[1] == "\(daemon)" ? fields : nil
        }
        #expect(!children.isEmpty && children.allSatisfy { $0[16] == "19" }, "the watch's workers at nice 19: \(children.map { $0[16] })")
        #expect(service.stopDaemon().contains("watch: "))
    }
}
