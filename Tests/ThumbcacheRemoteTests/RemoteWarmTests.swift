import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheTestSupport
@testable import ThumbcacheRemote

/// "Two machines": two caches in two directories over copies of the same files at other
/// paths, sharing one real SeaweedFS bucket through `thumbcache warm --remote`.
@Suite(.serialized)
struct RemoteWarmTests {
    struct Machine {
        let cache: String
        let files: String
    }

    /// A cluster with a bucket (or memcached servers), and `count` photos written under `a/`.
    final class Fleet {
        let dir = TemporaryDirectory()
        private let seaweed: SeaweedCluster?
        let memcached: MemcachedServers?
        let url: String
        var files: [String] = []
        var cluster: SeaweedCluster { seaweed! }

        init(photos count: Int, side: Int = 700, volumeServers: Int = 3, memcachedServers: Int = 0) throws {
            if memcachedServers > 0 {
                seaweed = nil
                memcached = try MemcachedServers(count: memcachedServers)
                url = memcached!.url
            } else {
                seaweed = try SeaweedCluster(volumeServers: volumeServers)
                memcached = nil
                url = "s3://fleet/thumbs"
                try client().createBucket().get()
            }
            try FileManager.default.createDirectory(atPath: dir.appending("a/files/trip"), withIntermediateDirectories: true)
            for i in 0..<count {
                let image = remoteTestImage(width: side + i, height: side * 3 / 4, seed: UInt64(i + 1))
                let name = i % 2 == 0 ? "trip/photo\(i).jpg" : "trip/drawing\(i).png"
                let bytes = i % 2 == 0 ? try ImageEncoder.jpeg(image) : try ImageEncoder.png(image)
                files.append(try dir.write("a/files/" + name, bytes))
            }
        }

        var a: Machine { Machine(cache: dir.appending("a/cache"), files: dir.appending("a/files")) }

        /// Another machine with the same files under other names.
        func machine(_ name: String) throws -> Machine {
            let files = dir.appending("\(name)/elsewhere")
            try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
            for (i, file) in self.files.enumerated() {
                try FileManager.default.copyItem(atPath: file, toPath: files + "/copy-\(i)-" + (file as NSString).lastPathComponent)
            }
            return Machine(cache: dir.appending("\(name)/cache"), files: files)
        }

        func client(environment: [String: String]? = nil) throws -> S3Client {
            try S3Client(bucket: "fleet", configuration: AWSConfiguration.load(environment: environment ?? cluster.environment))
        }

        func objects() throws -> [String] {
            try client().list(prefix: "thumbs/").get().objects.map(\.key)
        }

        /// Runs `thumbcache warm --json` with the cluster's credentials; returns the summary.
        func warm(_ m: Machine, _ extra: [String] = [], environment: [String: String]? = nil) throws
            -> (status: ChildProcess.Termination, summary: [String: Any], stderr: String)
        {
            let child = try warmProcess(m, extra, environment: environment)
            let (end, stderr) = child.wait()
            let json = child.output.joined(separator: "\n")
            let summary = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
            return (end, summary, stderr)
        }

        func warmProcess(_ m: Machine, _ extra: [String] = [], environment: [String: String]? = nil) throws -> ChildProcess {
            var env = ProcessInfo.processInfo.environment
            for (k, v) in environment ?? seaweed?.environment ?? [:] { env[k] = v }
            return try ChildProcess(program: "thumbcache", arguments: ["warm", m.files, "--cache", m.cache, "--remote", url,
                                                                       "--upload-min-size", "0", "--json", "--jobs", "2"] + extra,
                                    environment: env)
        }
    }

    static func remote(_ summary: [String: Any]) -> (stats: [String: Any], uploads: [String: Any]) {
        let r = summary["remote"] as? [String: Any] ?? [:]
        return (r["statistics"] as? [String: Any] ?? [:], r["uploads"] as? [String: Any] ?? [:])
    }

    /// Every stored thumbnail, by key.
    static func thumbnails(_ cache: String) throws -> [ThumbnailKey: [UInt8]] {
        let store = try ThumbnailStore.open(directory: cache)
        var all: [ThumbnailKey: [UInt8]] = [:]
        try store.forEachThumbnail { key, view in
            all[key] = Array(view.data)
            return true
        }
        return all
    }

    /// `thumbcache info` of each file, without what depends on its path or its copy's dates.
    static func decodedAttributes(_ machine: Machine) throws -> [[String]] {
        let files = (FileManager.default.enumerator(atPath: machine.files)?.allObjects as? [String] ?? [])
            .map { machine.files + "/" + $0 }.filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }
        return try files.map { path in
            let child = try ChildProcess(program: "thumbcache", arguments: ["info", path, "--cache", machine.cache])
            _ = child.wait()
            return child.output.filter { line in
                !["Path", "Name", "Date", "Inode", "Device", "Parent"].contains { line.components(separatedBy: " ").first?.contains($0) == true }
            }
        }
    }

    @Test func aSecondMachineFetchesInsteadOfDecoding() throws {
        let fleet = try Fleet(photos: 6)
        let first = try fleet.warm(fleet.a)
        #expect(first.status == .exited(0), "\(first.stderr)")
        #expect(first.summary["generated"] as? Int == 6)
        #expect(Self.remote(first.summary).uploads["uploaded"] as? Int == 6)
        #expect(Self.remote(first.summary).uploads["stillQueued"] as? Int == 0)
        #expect(try fleet.objects().count == 6)

        let b = try fleet.machine("b")
        let second = try fleet.warm(b)
        #expect(second.status == .exited(0), "\(second.stderr)")
        #expect(second.summary["generated"] as? Int == 0, "the second machine decodes nothing")
        #expect(second.summary["fetched"] as? Int == 6)
        #expect(Self.remote(second.summary).stats["fetched"] as? Int == 6)
        #expect(Self.remote(second.summary).uploads["uploaded"] as? Int == 0)
        let made = try Self.thumbnails(fleet.a.cache)
        #expect(made.count == 6)
        #expect(try Self.thumbnails(b.cache) == made, "byte-identical thumbnails under the same keys")
        let aInfo = try Self.decodedAttributes(fleet.a).map { $0.sorted() }
        #expect(aInfo.allSatisfy { $0.contains { $0.hasPrefix("kMDItemPixelWidth") } })
        #expect(try Self.decodedAttributes(b).map { $0.sorted() }.sorted { $0.description < $1.description }
                == aInfo.sorted { $0.description < $1.description }, "the index holds what the first machine decoded")

        // A corrupt object and a foreign PNG planted in the bucket are not served: decoded again.
        let names = try fleet.objects().sorted()
        let client = try fleet.client()
        try client.put([(key: names[0], body: Array("garbage".utf8), contentType: "image/png", metadata: [:]),
                        (key: names[1], body: try ImageEncoder.png(remoteTestImage(width: 40, height: 30)), contentType: "image/png", metadata: [:])])
            .forEach { try $0.get() }
        let c = try fleet.machine("c")
        let third = try fleet.warm(c)
        #expect(third.status == .exited(0))
        #expect(third.summary["generated"] as? Int == 2)
        #expect(third.summary["fetched"] as? Int == 4)
        #expect(Self.remote(third.summary).stats["rejected"] as? Int == 2)
        #expect(third.stderr.components(separatedBy: "skipped a remote object").count - 1 == 1, "said once: \(third.stderr)")
        #expect(try Self.thumbnails(c.cache) == made)
    }

    @Test func wrongCredentialsAreOneClearErrorAtStart() throws {
        let fleet = try Fleet(photos: 1, side: 64, volumeServers: 1)
        var env = fleet.cluster.environment
        env["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-value"
        let run = try fleet.warm(fleet.a, environment: env)
        #expect(run.status == .exited(1))
        #expect(run.stderr.contains("access denied"), "\(run.stderr)")
        #expect(!run.stderr.contains("wrong-secret-value"))
        #expect(!FileManager.default.fileExists(atPath: fleet.a.cache + "/index"), "nothing was warmed")
        env = fleet.cluster.environment
        let missing = try ChildProcess(program: "thumbcache", arguments: ["warm", fleet.a.files, "--cache", fleet.a.cache, "--remote",
                                                                           "s3://no-such-bucket/x"],
                                       environment: ProcessInfo.processInfo.environment.merging(env) { $1 })
        let (end, stderr) = missing.wait()
        #expect(end == .exited(1))
        #expect(stderr.contains("no bucket 'no-such-bucket'"), "\(stderr)")
    }

    /// A `get` (a process a file, as file managers run it) asks the remote only when its cache
    /// misses, and a remote that fails then costs a warning, not the thumbnail.
    @Test func aGetIsNotStoppedByTheRemote() throws {
        let fleet = try Fleet(photos: 2, side: 64, volumeServers: 1)
        var env = ProcessInfo.processInfo.environment.merging(fleet.cluster.environment) { $1 }
        env["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-value"
        env["THUMBCACHE_REMOTE"] = fleet.url
        func get(_ file: String) throws -> (end: ChildProcess.Termination, stderr: String, made: Bool) {
            let output = fleet.dir.appending("out-\((file as NSString).lastPathComponent).png")
            let child = try ChildProcess(program: "thumbcache", arguments: ["get", file, "--cache", fleet.a.cache, "-o", output, "--kind", "full", "--upload-min-size", "0",
                                                                            "--no-daemon"], environment: env)
            let (end, stderr) = child.wait()
            return (end, stderr, FileManager.default.fileExists(atPath: output))
        }
        // Cached already: nothing asked, nothing said.
        let warm = try ChildProcess(program: "thumbcache", arguments: ["warm", fleet.files[0], "--cache", fleet.a.cache])
        #expect(warm.wait().termination == .exited(0))
        let hit = try get(fleet.files[0])
        #expect(hit.end == .exited(0) && hit.made, "\(hit.stderr)")
        #expect(hit.stderr.isEmpty, "\(hit.stderr)")
        // Not cached: the remote refuses, the thumbnail is made here, and the refusal is said.
        let miss = try get(fleet.files[1])
        #expect(miss.end == .exited(0) && miss.made, "\(miss.stderr)")
        #expect(miss.stderr.contains("access denied") && !miss.stderr.contains("wrong-secret-value"), "[\(miss.stderr)]")
    }

    @Test func theGatewayStoppedMidWarmLeavesUploadsQueuedForTheNextRun() throws {
        let fleet = try Fleet(photos: 24, side: 700, volumeServers: 1)
        let warm = try fleet.warmProcess(fleet.a)
        // Stop the gateway once the first uploads have landed.
        let deadline = Date(timeIntervalSinceNow: 60)
        while (try? fleet.objects().count) ?? 0 == 0 && Date() < deadline { usleep(20_000) }
        fleet.cluster.stop("s3")
        let (end, stderr) = warm.wait()
        let summary = (try? JSONSerialization.jsonObject(with: Data(warm.output.joined().utf8))) as? [String: Any] ?? [:]
        #expect(end == .exited(0), "\(stderr)")
        #expect(summary["generated"] as? Int == 24, "the warm completes, decoding locally")
        let uploads = Self.remote(summary).uploads
        let uploaded = uploads["uploaded"] as? Int ?? -1
        let queued = uploads["stillQueued"] as? Int ?? -1
        #expect(uploaded + queued == 24 && queued > 0, "\(uploads)")
        #expect(stderr.components(separatedBy: "is unavailable").count - 1 == 1, "said once: \(stderr)")

        try fleet.cluster.startGateway(name: "s3", port: fleet.cluster.gatewayPort)
        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? fleet.objects()) != nil
            if !ready { usleep(100_000) }
        }
        let again = try fleet.warm(fleet.a)
        #expect(again.summary["alreadyCached"] as? Int == 24)
        #expect(Self.remote(again.summary).uploads["uploaded"] as? Int == queued)
        #expect(Self.remote(again.summary).uploads["stillQueued"] as? Int == 0)
        #expect(try fleet.objects().count == 24)
    }

    @Test func killedDuringUploadsLosesNoneAndDecodesNothingTwice() throws {
        let fleet = try Fleet(photos: 24, side: 700, volumeServers: 1)
        let warm = try fleet.warmProcess(fleet.a)
        let deadline = Date(timeIntervalSinceNow: 60)
        while (try? fleet.objects().count) ?? 0 == 0 && Date() < deadline { usleep(20_000) }
        warm.kill(SIGKILL)
        _ = warm.wait()
        let committed = try Self.thumbnails(fleet.a.cache).count
        let queued = try ThumbnailStore.open(directory: fleet.a.cache).queuedUploadCount()
        let sent = try fleet.objects().count
        #expect(queued + sent >= committed, "every committed thumbnail is in the bucket or on the queue")

        let again = try fleet.warm(fleet.a)
        #expect(again.status == .exited(0))
        #expect(again.summary["generated"] as? Int == 24 - committed, "what was made before the kill is not made again")
        #expect(Self.remote(again.summary).uploads["stillQueued"] as? Int == 0)
        #expect(try fleet.objects().count == 24)
    }

    @Test func memcachedServersShareTooAndOneGoneCostsOnlyMisses() throws {
        let fleet = try Fleet(photos: 24, side: 300, memcachedServers: 3)
        let first = try fleet.warm(fleet.a)
        #expect(first.status == .exited(0), "\(first.stderr)")
        #expect(Self.remote(first.summary).uploads["uploaded"] as? Int == 24)
        let second = try fleet.warm(try fleet.machine("b"))
        #expect(second.summary["generated"] as? Int == 0 && second.summary["fetched"] as? Int == 24, "\(second.summary)")

        fleet.memcached!.stop(fleet.memcached!.ports[1])
        let third = try fleet.warm(try fleet.machine("c"))
        #expect(third.status == .exited(0), "\(third.stderr)")
        let fetched = third.summary["fetched"] as? Int ?? -1
        let generated = third.summary["generated"] as? Int ?? -1
        #expect(fetched + generated == 24 && fetched > 0 && generated > 0, "a third of the keys are misses: \(third.summary)")
        #expect((third.summary["failures"] as? [String: Any])?.isEmpty ?? true, "no file failed")
    }

    @Test func threeShardsSplitATreeAndAFourthMachineFetchesItAll() throws {
        let fleet = try Fleet(photos: 30, side: 200, volumeServers: 1)
        var generated = 0
        for k in 1...3 {
            let m = try fleet.machine("shard\(k)")
            let run = try fleet.warm(m, ["--shard", "\(k)/3"])
            #expect(run.status == .exited(0), "\(run.stderr)")
            let made = run.summary["generated"] as? Int ?? 0
            let fetched = run.summary["fetched"] as? Int ?? 0
            #expect(made + fetched == run.summary["seen"] as? Int)
            #expect((run.summary["seen"] as? Int ?? 0) + (run.summary["outsideShard"] as? Int ?? 0) == 30)
            #expect(made > 0, "each share has files (30 files, 3 shares)")
            generated += made
        }
        #expect(generated == 30, "the shares split the tree: each file decoded once")
        let fourth = try fleet.warm(try fleet.machine("d"))
        #expect(fourth.summary["generated"] as? Int == 0)
        #expect(fourth.summary["fetched"] as? Int == 30)
        let bad = try fleet.warm(fleet.a, ["--shard", "4/3"])
        #expect(bad.status == .exited(64), "a share outside 1…N is a usage error")
    }
}

// One suite with the tests above, so that one of these long, blocking tests runs at a time: each
// starts a cluster and real processes and waits on them, holding a thread of the test pool.

/// `serve --remote-public-url`: thumbnails the bucket holds are answered with a redirect there.
extension RemoteWarmTests {
    @Test func servedThumbnailsTheBucketHoldsRedirectToIt() throws {
        let fleet = try Fleet(photos: 2, side: 400, volumeServers: 1)
        #expect(try fleet.warm(fleet.a).status == .exited(0))
        let photo = fleet.files[0]
        var env = ProcessInfo.processInfo.environment
        for (k, v) in fleet.cluster.environment { env[k] = v }
        for target in ["presigned", "https://cdn.example/thumbs"] {
            let serve = try ChildProcess(program: "thumbcache", arguments: [
                "serve", fleet.a.files, "--cache", fleet.a.cache, "--port", "0", "--json", "--remote", fleet.url, "--remote-public-url", target,
            ], environment: env)
            defer {
                serve.kill(SIGTERM)
                _ = serve.wait(timeout: 20)
            }
            let line = serve.waitForLines(1, timeout: 60).first ?? ""
            let port = ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["port"] as? Int ?? 0
            // Once, in a loaded CI run, serve ended without a line: what it wrote then is the clue.
            try #require(port > 0, "serve did not start: \(line) \(serve.wait(timeout: 5).stderr)")
            let path = photo.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? photo
            let byPath = try RawHTTP.request("GET", "/thumbnail?path=\(path)&size=256", port: port)
            let immutable = try #require(byPath.header("location"))
            let reply = try RawHTTP.request("GET", immutable, port: port)
            #expect(reply.status == 302, "\(reply.status) \(reply.text)")
            let location = try #require(reply.header("location"))
            let hash = String(immutable.dropFirst("/thumbnails/".count).prefix(32))
            #expect(location.contains("/thumbs/tc1/\(hash.prefix(2))/\(hash)/256x256-"), "\(location)")
            if target == "presigned" {
                #expect(location.hasPrefix(fleet.cluster.endpoint + "/fleet/thumbs/tc1/") && location.contains("X-Amz-Signature="))
                // The presigned URL works for anyone, with no credentials.
                let object = try RawHTTP.request("GET", String(location.dropFirst(fleet.cluster.endpoint.count)), port: fleet.cluster.gatewayPort)
                #expect(object.status == 200)
                let key = try #require(try ThumbnailStore.open(directory: fleet.a.cache).thumbnails(of: ContentHash(hex: hash)!).first?.key)
                let (thumbnail, _) = try RemoteThumbnail.parse(object.body, for: key)
                #expect(thumbnail.data == (try ThumbnailStore.open(directory: fleet.a.cache).thumbnail(key))?.data)
                #expect(reply.header("cache-control") == "public, max-age=1800")
            } else {
                #expect(location.hasPrefix("https://cdn.example/thumbs/thumbs/tc1/"))
                #expect(reply.header("cache-control") == "public, max-age=31536000")
            }
        }
    }
}

/// `watch --remote`: what a watcher makes as files arrive goes up, and a second watcher on
/// another copy fetches it instead of decoding.
extension RemoteWarmTests {
    @Test func whatAWatcherMakesGoesUpAndAnotherFetchesIt() throws {
        let fleet = try Fleet(photos: 0, volumeServers: 1)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in fleet.cluster.environment { env[k] = v }
        func watch(_ name: String) throws -> ChildProcess {
            try FileManager.default.createDirectory(atPath: fleet.dir.appending(name + "/tree"), withIntermediateDirectories: true)
            let child = try ChildProcess(program: "thumbcache", arguments: [
                "watch", fleet.dir.appending(name + "/tree"), "--cache", fleet.dir.appending(name + "/cache"), "--json", "--remote", fleet.url,
                "--upload-min-size", "0",
            ], environment: env)
            #expect(child.waitForLines(1, timeout: 60).count == 1, "watch started")
            return child
        }
        /// The watcher's batch lines after its first, as JSON.
        func batches(_ child: ChildProcess) -> [[String: Any]] {
            child.output.dropFirst().compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        }
        let photo = try ImageEncoder.jpeg(remoteTestImage(width: 500, height: 400, seed: 9))
        let first = try watch("one")
        defer {
            first.kill(SIGTERM)
            _ = first.wait(timeout: 20)
        }
        try fleet.dir.write("one/tree/new.jpg", photo)
        var landed = false
        for _ in 0..<200 where !landed {
            landed = (try? fleet.objects().count) == 1
            if !landed { usleep(50_000) }
        }
        #expect(landed, "the watcher's thumbnail went up: \(first.output)")

        let second = try watch("two")
        defer {
            second.kill(SIGTERM)
            _ = second.wait(timeout: 20)
        }
        try fleet.dir.write("two/tree/same-bytes.jpg", photo)
        var warm: [String: Any]?
        for _ in 0..<200 where warm == nil {
            warm = batches(second).compactMap { $0["warm"] as? [String: Any] }.first { ($0["seen"] as? Int ?? 0) > 0 }
            if warm == nil { usleep(50_000) }
        }
        #expect(warm?["fetched"] as? Int == 1 && warm?["generated"] as? Int == 0, "\(second.output)")
    }
}
