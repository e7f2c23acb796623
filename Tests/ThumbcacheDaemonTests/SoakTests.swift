import Foundation
import Testing
import ThumbcacheTestSupport

/// `Tools/soak` itself, briefly: a change made behind the services' backs, which its comparison
/// with a fresh warm must find (so a clean result means something); and, when asked, the live
/// services under churn and faults, which must end as a fresh warm would. Docs/OPERATIONS.md, "The soak".
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")))
struct SoakTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func soak(_ arguments: [String]) throws -> (status: ChildProcess.Termination, report: [String: Any], stderr: String) {
        let run = try ChildProcess.run("/usr/bin/python3", [root + "/Tools/soak", "--thumbcache", ChildProcess.productsDirectory + "/thumbcache", "--json"] + arguments)
        let report = (try? JSONSerialization.jsonObject(with: Data(run.stdout.joined(separator: "\n").utf8))) as? [String: Any] ?? [:]
        return (run.status, report, run.stderr)
    }

    /// Opt-in (`THUMBCACHE_SOAK=1`): a minute and a half of both cores beside the other suites,
    /// where its requests' 30-second timeouts would make a CI run a gamble (Docs/OPERATIONS.md).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["THUMBCACHE_SOAK"] == "1"))
    func aShortSoakWithFaultsEndsAsAFreshWarmWould() throws {
        let run = try Self.soak(["--seconds", "40", "--faults", "worker,daemon,bus", "--seed", "7"])
        let differences = run.report["differences"] as? [String] ?? ["no report: \(run.stderr.suffix(2000))"]
        #expect(run.status == .exited(0) && differences.isEmpty, "\(differences)")
        #expect((run.report["faults"] as? [String])?.count ?? 0 >= 1, "\(run.report["faults"] ?? "none")")
        let churn = run.report["churn"] as? [String: Int] ?? [:]
        #expect(churn["created", default: 0] > 10 && churn["deleted", default: 0] > 0 && churn["moved", default: 0] > 0, "\(churn)")
        #expect((run.report["requests"] as? [String: Int])?["http"] ?? 0 > 20)
    }

    @Test func aChangeNobodyWatchedIsFound() throws {
        let work = TemporaryDirectory(prefix: "thumbcache-soak-test")
        let run = try Self.soak(["--seconds", "8", "--no-faults", "--sabotage", "--work", work.path])
        let differences = run.report["differences"] as? [String] ?? []
        #expect(run.status == .exited(1), "\(run.report)")
        #expect(differences.contains { $0.hasPrefix("index: ") } && differences.contains { $0.hasPrefix("thumbnail: ") }
                    && differences.contains { $0.hasPrefix("words: ") }, "\(differences)")
        // Nothing it started outlives it, its private bus included.
        #expect(Self.processes(mentioning: work.path).isEmpty)
        // The kept folder, compared again without running anything, shows the same change.
        let again = try Self.soak(["--compare", work.path])
        let found = again.report["differences"] as? [String] ?? []
        #expect(again.status == .exited(1) && found.contains { $0.hasPrefix("thumbnail: ") } && found.contains { $0.hasPrefix("index: ") }, "\(again.report)")
        #expect(again.report["samePixelsOtherBytes"] is [String])
    }

    /// The command lines of running processes that name `text`.
    static func processes(mentioning text: String) -> [String] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        return pids.compactMap { pid in
            guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: bytes.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            return line.contains(text) ? line : nil
        }
    }
}
