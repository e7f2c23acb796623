import Foundation
import Testing
import ThumbcacheTestSupport

/// End-to-end: the built `thumbcache` binary on a temporary tree.
@Suite(.serialized)
struct WarmCommandTests {
    struct Summary: Decodable {
        var seen: Int
        var hashed: Int
        var unchanged: Int
        var sameContentAsAnother: Int
        var failures: [String: [String]]
    }

    func run(_ arguments: [String]) throws -> (status: ChildProcess.Termination, stdout: String, stderr: String) {
        let child = try ChildProcess(program: "thumbcache", arguments: arguments)
        let (end, stderr) = child.wait()
        return (end, child.output.joined(separator: "\n"), stderr)
    }

    func warm(_ tree: String, cache: String, _ extra: [String] = []) throws -> Summary {
        let (end, out, err) = try run(["warm", tree, "--cache", cache, "--json"] + extra)
        #expect(end == .exited(0), "warm failed: \(err)")
        return try JSONDecoder().decode(Summary.self, from: Data(out.utf8))
    }

    @Test func secondWarmReadsNothingAndChangesAreSeen() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        let cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree + "/sub", withIntermediateDirectories: true)
        for i in 0..<20 { try dir.write("tree/sub/f\(i).bin", Array("file \(i)".utf8)) }
        try dir.write("tree/copy-of-f3.bin", Array("file 3".utf8))
        // Let the files' times age past the stat cache's racy window, as real photos' have.
        sleep(3)

        let first = try warm(tree, cache: cache)
        #expect(first.seen == 21)
        #expect(first.hashed == 21)
        #expect(first.sameContentAsAnother == 1)

        let second = try warm(tree, cache: cache)
        #expect(second.unchanged == 21)
        #expect(second.hashed == 0)

        try dir.write("tree/sub/f7.bin", Array("changed".utf8))
        let third = try warm(tree, cache: cache)
        #expect(third.hashed == 1)
        #expect(third.unchanged == 20)

        let (end, out, _) = try run(["stats", "--cache", cache, "--json"])
        #expect(end == .exited(0))
        #expect(out.contains("\"files\" : 21"))
    }

    @Test func unreadableEntriesAreReportedAndTheWarmGoesOn() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        try dir.write("tree/good.png", [1, 2, 3])
        #expect(symlink(dir.appending("nowhere"), tree + "/broken-link.jpg") == 0)
        let summary = try warm(tree, cache: dir.appending("cache"), ["--follow-symlinks"])
        #expect(summary.hashed == 1)
        #expect(summary.failures["dangling symbolic link (its target does not exist)"] == [tree + "/broken-link.jpg"])

        let (end, out, _) = try run(["warm", tree, "--cache", dir.appending("cache"), "--follow-symlinks", "--strict"])
        #expect(end == .exited(1))
        #expect(out.contains(tree + "/broken-link.jpg"))
    }

    @Test func badArgumentsAndBadCachesAreClearErrors() throws {
        let dir = TemporaryDirectory()
        let missing = try run(["warm", dir.appending("no-such-dir")])
        #expect(missing.status == .exited(64))
        #expect(missing.stderr.contains("no such file or directory: \(dir.appending("no-such-dir"))"))

        let file = try dir.write("not-a-dir", [1])
        let badCache = try run(["stats", "--cache", file])
        #expect(badCache.status == .exited(1))
        #expect(badCache.stderr.contains(file))
    }

    @Test func helpTeaches() throws {
        let (end, out, _) = try run(["warm", "--help"])
        #expect(end == .exited(0))
        #expect(out.contains("--jobs"))
        #expect(out.contains("stat cache"))
    }
}
