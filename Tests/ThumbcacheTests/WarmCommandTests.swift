import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport

/// End-to-end: the built `thumbcache` binary on a temporary tree.
@Suite(.serialized)
struct WarmCommandTests {
    struct Summary: Decodable {
        var seen: Int
        var generated: Int
        var alreadyCached: Int
        var sameContentAsAnother: Int
        var notSupported: Int
        var specialFiles: Int
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

    /// Help text is prose: a line end escaped twice inside `"""` would print a backslash. An
    /// example fits in 80 columns: a longer one is wrapped, and its end lands in the left margin.
    @Test(arguments: ["", "warm", "get", "search", "info", "text", "stats", "compact", "thumbnail", "freedesktop", "daemon", "watch", "serve"])
    func helpHasNoStrayBackslashesAndExamplesFit(command: String) throws {
        let (end, out, _) = try run((command.isEmpty ? [] : [command]) + ["--help"])
        #expect(end == .exited(0))
        #expect(out.contains("USAGE"))
        #expect(!out.contains("\\"), "\(out)")
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
        for (line, next) in zip(lines, lines.dropFirst()) where line.hasPrefix("  thumbcache ") {
            #expect(next.isEmpty || next.hasPrefix(" "), "an example wrapped: \(line) / \(next)")
        }
    }

    /// A mistyped command is answered with the nearest one, as a usage error.
    @Test func aMistypedCommandIsAnsweredWithTheNearest() throws {
        let (end, _, err) = try run(["serch", "holiday"])
        #expect(end == .exited(64))
        #expect(err.contains("'serch' is not a thumbcache command. Did you mean 'search'?"), "\(err)")
        let (far, _, farErr) = try run(["frobnicate"])
        #expect(far == .exited(64))
        #expect(farErr.contains("'frobnicate' is not a thumbcache command.") && !farErr.contains("Did you mean"), "\(farErr)")
        let (_, _, near) = try run(["wach", "/tmp"])
        #expect(near.contains("Did you mean 'watch'?"), "\(near)")
    }

    /// A command that only reads or tidies the cache says there is none, and makes none, where
    /// `--cache` names nothing (a mistyped path).
    @Test(arguments: [["stats"], ["search", "holiday"], ["info", "/etc/hostname"], ["compact"], ["check"]])
    func aCommandThatReadsTheCacheMakesNone(arguments: [String]) throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("typo")
        let (end, _, err) = try run(arguments + ["--cache", cache])
        #expect(end == .exited(1))
        #expect(err.contains("no cache at \(cache)"), "\(err)")
        #expect(!FileManager.default.fileExists(atPath: cache))
    }

    /// `thumbnail -o` writes what the name says, as `get` does; --format overrides the name.
    @Test func aThumbnailIsWrittenInTheFormatItsNameSays() throws {
        let dir = TemporaryDirectory()
        let source = try dir.write("a.png", ImageEncoder.png(TestPictures.source(width: 64, height: 48)))
        for (name, extra, jpeg) in [("t.jpg", [String](), true), ("t.JPEG", [], true), ("t.png", [], false), ("u.jpg", ["--format", "png"], false)] {
            let (end, _, err) = try run(["thumbnail", source, "-o", dir.appending(name), "--size", "32"] + extra)
            #expect(end == .exited(0), "\(err)")
            let head = Array(try Data(contentsOf: URL(fileURLWithPath: dir.appending(name))).prefix(2))
            #expect(head == (jpeg ? [0xFF, 0xD8] : [0x89, 0x50]), "\(name) \(extra)")
        }
    }

    /// The stat cache keeps each file's detected type: a second warm of an unchanged tree opens
    /// its directories and nothing else (strace, on the real binary and its workers).
    @Test func aRewarmOfAnUnchangedTreeOpensNoFile() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree/sub"), withIntermediateDirectories: true)
        _ = try dir.write("tree/a.png", ImageEncoder.png(TestPictures.source(width: 64, height: 48)))
        _ = try dir.write("tree/sub/notes.txt", Array("some text\n".utf8))
        _ = try dir.write("tree/sub/blob.bin", [0, 1, 2, 3, 255, 254])
        // Files changed within 2 s of a warm are hashed again by the next (the stat cache's racy
        // window, Docs/FORMAT.md): these are left to settle first.
        RacyWindow.waitUntilSettled([dir.appending("tree")])
        let first = try warm(dir.appending("tree"), cache: dir.appending("cache"))
        #expect(first.seen == 3)
        let log = dir.appending("strace.log")
        let (end, _, err) = try run(["--version"])  // the binary runs at all
        #expect(end == .exited(0), "\(err)")
        _ = try FixtureTools.run("strace", ["-f", "-qq", "-e", "trace=open,openat,openat2", "-o", log, ChildProcess.productsDirectory + "/thumbcache",
                                                "warm", dir.appending("tree"), "--cache", dir.appending("cache"), "--json"])
        let opened = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains(dir.appending("tree")) && !$0.contains("O_DIRECTORY") }
        #expect(opened.isEmpty, "\(opened)")
    }

    @Test func warmMakesThumbnailsOnceAndSeesChanges() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        let cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree + "/sub", withIntermediateDirectories: true)
        for i in 0..<6 { try dir.write("tree/sub/p\(i).png", ImageEncoder.png(testPhoto(width: 300 + i, height: 200))) }
        try dir.write("tree/photo.jpg", ImageEncoder.jpeg(testPhoto(width: 640, height: 480)))
        try dir.write("tree/copy-of-p3.png", ImageEncoder.png(testPhoto(width: 303, height: 200)))
        try dir.write("tree/notes.txt", Array("a page of text".utf8))
        try dir.write("tree/blob.bin", (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        // The files are seconds old, inside the stat cache's racy window: each warm reads them
        // again. The counts below hold either way; ThumbnailStoreTests covers settled entries.

        let first = try warm(tree, cache: cache, ["--scale", "1,2"])
        #expect(first.seen == 10)
        #expect(first.generated == 8)
        #expect(first.sameContentAsAnother == 1)
        #expect(first.notSupported == 1)

        // The copy's thumbnails were made by an earlier run: it is already cached too.
        let second = try warm(tree, cache: cache, ["--scale", "1,2"])
        #expect(second.generated == 0)
        #expect(second.alreadyCached == 9)
        #expect(second.sameContentAsAnother == 0)

        try dir.write("tree/sub/p1.png", ImageEncoder.png(testPhoto(width: 64, height: 64)))
        let third = try warm(tree, cache: cache, ["--scale", "1,2"])
        #expect(third.generated == 1)

        let (end, out, _) = try run(["stats", "--cache", cache, "--json"])
        #expect(end == .exited(0))
        // 9 contents × 2 scales, the changed file's old content included.
        #expect(out.contains("\"thumbnails\" : 18"))
    }

    @Test func relativeAndAbsoluteRootsAreTheSameFiles() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        try dir.write("tree/a.png", ImageEncoder.png(testPhoto(width: 40, height: 30)))
        let cache = dir.appending("cache")
        _ = try warm(dir.appending("tree"), cache: cache)
        // The same tree through "..": the same path in the stat cache, not a second file.
        let again = try warm(dir.appending("tree/../tree"), cache: cache)
        #expect(again.alreadyCached == 1)
        let (_, out, _) = try run(["stats", "--cache", cache, "--json"])
        #expect(out.contains("\"files\" : 1"))
    }

    @Test func getWritesTheThumbnail() throws {
        let dir = TemporaryDirectory()
        let image = try dir.write("wide.png", ImageEncoder.png(testPhoto(width: 400, height: 100)))
        let out = dir.appending("thumb.png")
        let (end, _, err) = try run(["get", image, "--size", "64", "--scale", "2", "-o", out, "--cache", dir.appending("cache")])
        #expect(end == .exited(0), "\(err)")
        let (thumb, _) = try Thumbnailer.thumbnail(ofFileAt: out, options: .init(maxWidth: 4096, maxHeight: 4096))
        #expect(thumb.width == 128 && thumb.height == 32)
        let icon = try run(["get", image, "--kind", "icon", "-o", out, "--cache", dir.appending("cache"), "--json"])
        #expect(icon.stdout.contains("\"kind\" : \"icon\""))
        // Only a low-quality image, which a fresh PNG has not: said so, not "no provider".
        let other = try dir.write("other.png", ImageEncoder.png(testPhoto(width: 50, height: 40)))
        let low = try run(["get", other, "--kind", "low", "-o", out, "--cache", dir.appending("cache")])
        #expect(low.status == .exited(1) && low.stderr.contains("other.png: no low-quality image"), "\(low.stderr)")
    }

    /// A `get` read without ArgumentParser (its common options only) writes what the parsed
    /// command writes and says the same; a value it cannot take goes to ArgumentParser, whose
    /// error the user sees.
    @Test func aQuickGetDoesWhatTheParsedOneDoes() throws {
        let dir = TemporaryDirectory()
        let image = try dir.write("photo.png", ImageEncoder.png(testPhoto(width: 300, height: 200)))
        var results: [(json: String, png: Data)] = []
        // `--timeout 20`, the default, is not one of the quick options: the parsed way.
        for (name, extra) in [("quick-made", []), ("quick-hit", []), ("parsed-hit", ["--timeout", "20"])] {
            let out = dir.appending(name + ".png")
            let (end, stdout, err) = try run(["get", image, "-s", "96", "--scale", "1.5", "--kind", "full", "--json", "-o", out,
                                              "--cache", dir.appending("cache")] + extra)
            #expect(end == .exited(0), "\(name): \(err)")
            let json = stdout.split(separator: "\n").filter { !$0.contains("\"path\"") }.joined(separator: "\n")  // each its own
            results.append((json, try Data(contentsOf: URL(fileURLWithPath: out))))
        }
        #expect(results[0].json.contains("\"fromCache\" : false") && results[1].json.contains("\"fromCache\" : true"))
        #expect(results[1].json == results[2].json && results[1].png == results[2].png)
        // Made and stored, then read back: the same pixels (the bytes may be encoded apart).
        let pixels = try results.prefix(2).map { try ImageDecoder.png(Array($0.png), name: "out").pixels }
        #expect(pixels[0] == pixels[1])
        #expect(results[2].json.contains("\"width\" : 144"), "\(results[2].json)")

        for (bad, says) in [(["-s", "0"], "--size must be between 1 and 4096"), (["--kind", "huge"], "--kind"), (["--scale", "9"], "--scale")] {
            let (end, _, err) = try run(["get", image, "-o", dir.appending("x.png")] + bad)
            #expect(end == .exited(64) && err.contains(says), "\(bad): \(err)")
        }
    }

    /// `get` (best, the default) writes the icon when the thumbnail cannot be made, and says why
    /// on standard error; a file of a type with no thumbnails gets its icon without a word.
    @Test func getSaysWhyTheIconStandsIn() throws {
        let dir = TemporaryDirectory()
        let jpeg = try ImageEncoder.jpeg(testPhoto(width: 400, height: 300))
        let broken = try dir.write("truncated.jpg", Array(jpeg.prefix(jpeg.count / 2)))
        let out = dir.appending("out.png")
        for attempt in ["first", "recorded earlier"] {
            let (end, stdout, err) = try run(["get", broken, "-o", out, "--cache", dir.appending("cache"), "--json"])
            #expect(end == .exited(0), "\(attempt): \(err)")
            #expect(stdout.contains("\"kind\" : \"icon\""))
            #expect(err.contains("truncated.jpg: the icon stands in for the thumbnail: ") && err.contains("Premature end of JPEG file"),
                    "\(attempt): \(err)")
        }
        let blob = try dir.write("blob.bin", [0, 1, 2, 3, 255, 254])
        let (end, _, err) = try run(["get", blob, "-o", out, "--cache", dir.appending("cache")])
        #expect(end == .exited(0) && err.isEmpty, "\(err)")
    }

    @Test func unreadableEntriesAreReportedAndTheWarmGoesOn() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        try dir.write("tree/good.png", ImageEncoder.png(testPhoto(width: 40, height: 30)))
        let jpeg = try ImageEncoder.jpeg(testPhoto(width: 400, height: 300))
        try dir.write("tree/truncated.jpg", Array(jpeg.prefix(jpeg.count / 2)))
        #expect(symlink(dir.appending("nowhere"), tree + "/broken-link.jpg") == 0)
        let summary = try warm(tree, cache: dir.appending("cache"), ["--follow-symlinks"])
        #expect(summary.generated == 1)
        #expect(summary.failures["dangling symbolic link (its target does not exist)"] == [tree + "/broken-link.jpg"])
        #expect(summary.failures["corrupt or truncated image: Premature end of JPEG file"] == [tree + "/truncated.jpg"])

        // Names that promise an image whose bytes are not one are failures, not "unsupported".
        try dir.write("tree/empty.png", [])
        try dir.write("tree/text.jpg", Array("hello".utf8))
        let named = try warm(tree, cache: dir.appending("cache-named"), [])
        #expect(named.failures["empty file"] == [tree + "/empty.png"])
        #expect(named.failures["not a valid JPEG image (its content is public.plain-text)"] == [tree + "/text.jpg"])
        try FileManager.default.removeItem(atPath: tree + "/empty.png")
        try FileManager.default.removeItem(atPath: tree + "/text.jpg")

        // Remembered: the next warm does not decode it again, unless asked.
        let again = try warm(tree, cache: dir.appending("cache"), [])
        #expect(again.failures.keys.contains { $0.contains("recorded earlier") })
        let retried = try warm(tree, cache: dir.appending("cache"), ["--retry-failed"])
        #expect(retried.failures["corrupt or truncated image: Premature end of JPEG file"] == [tree + "/truncated.jpg"])

        let (end, out, _) = try run(["warm", tree, "--cache", dir.appending("cache"), "--follow-symlinks", "--strict"])
        #expect(end == .exited(1))
        #expect(out.contains(tree + "/broken-link.jpg"))
    }

    /// A FIFO in the tree would block a reader forever: the warm passes over it and says so.
    @Test func fifosArePassedOverAndCounted() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        try dir.write("tree/good.png", ImageEncoder.png(testPhoto(width: 40, height: 30)))
        #expect(mkfifo(tree + "/pipe.png", 0o600) == 0)
        #expect(mkfifo(dir.appending("named.jpg"), 0o600) == 0)
        let summary = try warm(tree, cache: dir.appending("cache"))
        #expect(summary.seen == 1 && summary.generated == 1 && summary.failures.isEmpty)
        #expect(summary.specialFiles == 1)
        let (end, out, err) = try run(["warm", tree, dir.appending("named.jpg"), "--cache", dir.appending("cache")])
        #expect(end == .exited(0), "\(err)")
        #expect(out.contains("FIFOs, sockets, devices (passed over): 2"), "\(out)")
    }

    /// A list of paths (as `find` prints it, by lines or NUL-separated) is warmed and nothing
    /// else; a listed path that is gone is a failure, not the end of the warm.
    @Test func aListOfPathsIsWarmed() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree/sub"), withIntermediateDirectories: true)
        let a = try dir.write("tree/a.png", ImageEncoder.png(testPhoto(width: 40, height: 30)))
        let b = try dir.write("tree/sub/with space.png", ImageEncoder.png(testPhoto(width: 50, height: 30)))
        try dir.write("tree/unlisted.png", ImageEncoder.png(testPhoto(width: 60, height: 30)))
        let gone = dir.appending("tree/gone.png")
        let thumbcache = ChildProcess.productsDirectory + "/thumbcache"
        for (name, list) in [("lines", "printf '%s\\n\\n' '\(a)' '\(b)' '\(gone)'"), ("nul", "printf '%s\\0' '\(a)' '\(b)' '\(gone)'")] {
            let flags = name == "nul" ? " --null" : ""
            let (end, out, err) = try ChildProcess.run("/bin/sh", ["-c", "\(list) | \(thumbcache) warm --files-from -\(flags) --json --cache \(dir.appending(name))"])
            #expect(end == .exited(0), "\(name): \(err)")
            let summary = try JSONDecoder().decode(Summary.self, from: Data(out.joined(separator: "\n").utf8))
            #expect(summary.seen == 3 && summary.generated == 2, "\(name): \(out)")
            #expect(summary.failures.values.joined().elementsEqual([gone]), "\(name): \(summary.failures)")
        }
        // From a file, beside a path given as an argument.
        let list = try dir.write("list.txt", Array("\(b)\n".utf8))
        let both = try warm(a, cache: dir.appending("both"), ["--files-from", list])
        #expect(both.seen == 2 && both.generated == 2)
        let (end, _, err) = try run(["warm", "--files-from", dir.appending("no-list"), "--cache", dir.appending("none")])
        #expect(end == .exited(1) && err.contains("--files-from \(dir.appending("no-list")): cannot open"), "\(err)")
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

extension WarmCommandTests {
    @Test func compactRemovesThumbnailsOfDeletedFiles() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        let cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        try dir.write("tree/a.png", ImageEncoder.png(testPhoto(width: 40, height: 30)))
        try dir.write("tree/b.png", ImageEncoder.png(testPhoto(width: 50, height: 30)))
        _ = try warm(tree, cache: cache)
        try FileManager.default.removeItem(atPath: tree + "/a.png")
        let dry = try run(["compact", "--gc", "--dry-run", "--cache", cache])
        #expect(dry.status == .exited(0))
        #expect(dry.stdout.contains("Dry run"))
        let (end, out, err) = try run(["compact", "--gc", "--max-size", "1G", "--json", "--cache", cache])
        #expect(end == .exited(0), "\(err)")
        #expect(out.contains("\"orphanedThumbnails\" : 1"))
        #expect(out.contains("\"generation\" : 1"))
        let bad = try run(["compact", "--max-size", "lots", "--cache", cache])
        #expect(bad.status == .exited(64))
    }
}
