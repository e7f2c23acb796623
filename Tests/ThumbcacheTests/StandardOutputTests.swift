import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport

/// `-o -`: the image on standard output, for a pipe, never on a terminal, and never mixed with `--json`.
@Suite struct StandardOutputTests {
    /// Runs the built `thumbcache` with its standard output sent to `stdout` by the shell.
    private func shell(_ arguments: [String], stdout: String) throws -> (status: ChildProcess.Termination, stderr: String) {
        let (status, _, stderr) = try ChildProcess.run("/bin/sh", ["-c", "exec \"$0\" \"$@\" > \"\(stdout)\"",
                                                                   ChildProcess.productsDirectory + "/thumbcache"] + arguments)
        return (status, stderr)
    }

    @Test func getAndThumbnailWriteTheImageToStandardOutput() throws {
        let dir = TemporaryDirectory()
        let image = try dir.write("photo.png", ImageEncoder.png(testPhoto(width: 300, height: 200)))
        let cache = ["--cache", dir.appending("cache")]
        // Made, then a hit read the quick way, then the parsed way (`--timeout` is not a quick option).
        for (name, arguments) in [("made", ["get", image, "-o", "-", "-s", "96"] + cache), ("hit", ["get", image, "-o", "-", "-s", "96"] + cache),
                                  ("parsed", ["get", image, "-o", "-", "-s", "96", "--timeout", "20"] + cache),
                                  ("thumbnail", ["thumbnail", image, "-o", "-", "-s", "96"])] {
            let out = dir.appending(name + ".out")
            let (end, err) = try shell(arguments, stdout: out)
            #expect(end == .exited(0), "\(name): \(err)")
            let png = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: out))), name: name)
            #expect(png.width == 96 && png.height == 64, "\(name)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appending("-")))
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/-"))
    }

    @Test func standardOutputIsRefusedWithJSONAndOnATerminal() throws {
        let dir = TemporaryDirectory()
        let image = try dir.write("photo.png", ImageEncoder.png(testPhoto(width: 30, height: 20)))
        let (end, err) = try shell(["get", image, "-o", "-", "--json", "--cache", dir.appending("cache")], stdout: dir.appending("out"))
        #expect(end == .exited(64) && err.contains("--json prints to standard output"), "\(err)")
        // A terminal: util-linux's `script` gives the command one.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        for command in ["get \(image) -o - --cache \(dir.appending("cache"))", "thumbnail \(image) -o -"] {
            let (_, stdout, _) = try ChildProcess.run("/usr/bin/script", ["-qec", ChildProcess.productsDirectory + "/thumbcache " + command, "/dev/null"])
            #expect(stdout.joined().contains("standard output is a terminal"), "\(command): \(stdout)")
        }
    }
}
