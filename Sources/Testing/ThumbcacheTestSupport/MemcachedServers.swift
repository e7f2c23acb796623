import Foundation

/// Real memcached servers on loopback (Debian's memcached), for the remote tier's tests;
/// stopped when released.
package final class MemcachedServers: @unchecked Sendable {
    // @unchecked Sendable: `processes` changes only in calls the owning test makes.
    private var processes: [Int: ChildProcess] = [:]
    package let ports: [Int]

    package init(count: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/memcached") else {
            throw SeaweedCluster.Unavailable(description: "no /usr/bin/memcached: run Tools/setup")
        }
        var ports: [Int] = []
        while ports.count < count {
            let port = try SeaweedCluster.freePortPair()
            if !ports.contains(port) { ports.append(port) }
        }
        self.ports = ports
        for port in ports {
            processes[port] = try ChildProcess(program: "/usr/bin/memcached", arguments: [
                "-l", "127.0.0.1", "-p", String(port), "-U", "0", "-m", "64", "-u", "nobody",
            ])
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        while ports.contains(where: { SeaweedCluster.isFree($0) }) && Date() < deadline { usleep(20_000) }
    }

    deinit {
        for port in processes.keys { stop(port) }
    }

    /// `memcached://127.0.0.1:P1,127.0.0.1:P2,…`
    package var url: String { "memcached://" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",") }

    package func stop(_ port: Int) {
        guard let p = processes.removeValue(forKey: port) else { return }
        p.kill(SIGKILL)
        _ = p.wait(timeout: 10)
    }
}
