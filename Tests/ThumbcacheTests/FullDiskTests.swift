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
}
