import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport

/// A cache on a file system that fills up during a warm: a private tmpfs in a mount namespace of
/// the test's own (an unprivileged user namespace, so no root is needed).
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")))
struct FullDiskTests {
    @Test func aFullDiskIsNamedAsSuchByWarmAndSearch() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree"), cache = dir.appending("cache")
        for path in [tree, cache] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        for i in 0..<16 {
            // Noise: thumbnails that do not compress, so a few fill the file system.
            var image = testPhoto(width: 300, height: 300)
            var random = SeededRandom(seed: UInt64(i))
            for k in image.pixels.indices where k % 4 != 3 { image.pixels[k] = UInt8(truncatingIfNeeded: random.next()) }
            try dir.write("tree/noise\(i).png", ImageEncoder.png(image))
        }
        for i in 0..<20 { try dir.write("tree/data\(i).bin", [UInt8](repeating: UInt8(i), count: 50_000)) }
        let tool = ChildProcess.productsDirectory + "/thumbcache"
        let script = """
            mount -t tmpfs -o size=1m tmpfs '\(cache)' || exit 99
            '\(tool)' warm '\(tree)' --cache '\(cache)' 2>&1
            echo "warm exit status: $?"
            echo "search:"
            '\(tool)' search 'kMDItemFSSize > 0' --cache '\(cache)' --count 2>&1
            exit 0
            """
        let child = try ChildProcess(program: "/usr/bin/unshare", arguments: ["--user", "--map-root-user", "--mount", "sh", "-c", script])
        let (end, stderr) = child.wait()
        let out = child.output.joined(separator: "\n")
        try #require(end == .exited(0), "the private tmpfs could not be set up: \(stderr) \(out)")
        let (warm, search) = (out.components(separatedBy: "search:")[0], out.components(separatedBy: "search:").last ?? "")
        #expect(warm.contains("No space left on device"), "\(warm)")
        #expect(!warm.contains("Input/output error"), "\(warm)")
        #expect(warm.contains(cache))
        // A warm that could not keep what it made says so once, with what to do, and exits 74.
        #expect(warm.contains("warm exit status: 74"), "\(warm)")
        #expect(warm.components(separatedBy: "could not write the cache at \(cache): the file system holding it is full").count == 2, "\(warm)")
        #expect(warm.contains("free some space there"))
        #expect(search.contains("the file system holding it is full"), "\(search)")
        #expect(search.contains(cache + "/index"))
    }

    /// `watch` on a cache whose file system fills: it says so once, keeps going, and once there
    /// is room again warms the trees again, so what changed meanwhile is not lost (the soak found
    /// files changed during a full disk missing from the index for good).
    @Test func watchCatchesUpOnceTheDiskHasRoomAgain() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree"), cache = dir.appending("cache")
        for path in [tree, cache] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        try dir.write("tree/first.png", ImageEncoder.png(testPhoto(width: 64, height: 48)))
        let late = try ImageEncoder.png(testPhoto(width: 90, height: 60))
        let latePath = dir.appending("late.png")
        try Data(late).write(to: URL(fileURLWithPath: latePath))
        let (out, said) = try Self.watchThroughAFullDisk(dir, tree: tree, cache: cache, filler: "64k",
                                                         whileFull: "cp '\(latePath)' '\(tree)/late.png'", search: "kMDItemFSName == \"late.png\"")
        #expect(said.components(separatedBy: "could not write the cache at \(cache)").count == 2, "said once: \(said)")
        #expect(said.contains("the cache takes writes again: caught up"), "\(said)")
        #expect(out.components(separatedBy: "found:").last?.contains(tree + "/late.png") == true, "\(out) \(said)")
    }

    /// A deletion alone during a full disk: the index and the stat cache could not drop the
    /// file, and no warm was failing to say so, so nothing caught up (the soak found a deleted
    /// file still indexed). Now a refused move or removal is a failed write like a warm's.
    @Test func aRemovalTheCacheRefusedIsCaughtUp() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree"), cache = dir.appending("cache")
        for path in [tree, cache] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        for i in 0..<40 { try dir.write("tree/photo\(i).png", ImageEncoder.png(testPhoto(width: 64 + i, height: 48))) }
        let (out, said) = try Self.watchThroughAFullDisk(dir, tree: tree, cache: cache, filler: "4k",
                                                         whileFull: "rm '\(tree)'/photo1*.png", search: "kMDItemFSName == \"photo1*\"")
        let found = out.components(separatedBy: "found:").last?.split(separator: "\n").filter { $0.hasPrefix("/") } ?? []
        #expect(found.isEmpty, "still indexed: \(found) \(said)")
    }

    /// `watch` on `cache` in a private 4 MB tmpfs (a user and mount namespace): once it has
    /// warmed, the tmpfs is filled (in blocks of `filler`), `whileFull` runs, 3 s later the filler
    /// goes, and once it said it caught up (20 s at most) `search` runs. Returns the script's
    /// output (the search's after "found:") and what `watch` said on stderr.
    static func watchThroughAFullDisk(_ dir: TemporaryDirectory, tree: String, cache: String, filler: String, whileFull: String,
                                      search: String) throws -> (out: String, said: String) {
        let tool = ChildProcess.productsDirectory + "/thumbcache"
        let script = """
            mount -t tmpfs -o size=4m tmpfs '\(cache)' || exit 99
            '\(tool)' watch '\(tree)' --cache '\(cache)' > '\(dir.appending("watch.out"))' 2> '\(dir.appending("watch.err"))' &
            watcher=$!
            for i in $(seq 100); do grep -q . '\(dir.appending("watch.out"))' 2>/dev/null && break; sleep 0.1; done
            dd if=/dev/zero of='\(cache)/filler' bs=\(filler) 2>/dev/null
            \(whileFull)
            sleep 3
            rm '\(cache)/filler'
            for i in $(seq 200); do grep -q 'caught up' '\(dir.appending("watch.err"))' && break; sleep 0.1; done
            echo "found:"
            '\(tool)' search '\(search)' --cache '\(cache)' 2>&1
            kill $watcher; wait $watcher
            exit 0
            """
        let child = try ChildProcess(program: "/usr/bin/unshare", arguments: ["--user", "--map-root-user", "--mount", "sh", "-c", script])
        let (end, stderr) = child.wait()
        let out = child.output.joined(separator: "\n")
        try #require(end == .exited(0), "the private tmpfs could not be set up: \(stderr) \(out)")
        return (out, (try? String(contentsOfFile: dir.appending("watch.err"), encoding: .utf8)) ?? "")
    }
}
