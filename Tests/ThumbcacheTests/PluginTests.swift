import Foundation
import Testing
import ThumbcacheTestSupport
@testable import Thumbcache

/// `.thumbnailer` plug-ins run by thumbcache: Debian's gdk-pixbuf-thumbnailer for a type with no
/// built-in decoder (XPM), and hostile plug-ins that write outside their output, hang or fail, all
/// inside the real bubblewrap sandbox.
@Suite(.serialized)
struct PluginTests {
    static let gdkPixbuf = ThumbnailerEntry(parsing: (try? String(contentsOfFile: "/usr/share/thumbnailers/gdk-pixbuf-thumbnailer.thumbnailer", encoding: .utf8)) ?? "",
                                            name: "gdk-pixbuf-thumbnailer")

    /// An XPM (red on the left, blue on the right) made by ImageMagick.
    static func xpm(_ dir: TemporaryDirectory, _ name: String = "picture.xpm") throws -> String {
        let path = dir.appending(name)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = try FixtureTools.run("convert", ["-size", "64x96", "gradient:red-blue", "-rotate", "-90", path])
        return path
    }

    static func sh(_ script: String, name: String = "test-plugin", mimeTypes: [String] = ["image/x-xpixmap"]) -> ThumbnailerEntry {
        ThumbnailerEntry(name: name, exec: "/bin/sh -c '\(script)' plugin %i %o %s", mimeTypes: mimeTypes)
    }

    @Test func execLinesExpandLikeGNOMEs() throws {
        let entry = try #require(ThumbnailerEntry(parsing: """
            # a comment
            [Thumbnailer Entry]
            TryExec=/usr/bin/true
            Exec=/usr/bin/thumb -s %s "--title=%u" '%i' %o 100%%
            MimeType=image/x-a;image/x-b;
            """, name: "thumb"))
        #expect(entry.mimeTypes == ["image/x-a", "image/x-b"])
        #expect(entry.command(uri: "file:///a%20b.x", input: "/a b.x", output: "/o.png", size: 128)
            == ["/usr/bin/thumb", "-s", "128", "--title=file:///a%20b.x", "/a b.x", "/o.png", "100%"])
        #expect(ThumbnailerEntry(name: "x", exec: "/bin/thumb %q", mimeTypes: []).command(uri: "", input: "", output: "", size: 1) == nil)
        #expect(ThumbnailerEntry(name: "x", exec: "/bin/thumb 'open", mimeTypes: []).command(uri: "", input: "", output: "", size: 1) == nil)
        #expect(entry.isRunnable)
        #expect(!ThumbnailerEntry(name: "x", tryExec: "/no/such/program", exec: "/usr/bin/true", mimeTypes: ["a/b"]).isRunnable)
    }

    @Test func installedPluginsComeFromTheUsersDirectoryFirst() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("home/thumbnailers"), withIntermediateDirectories: true)
        _ = try dir.write("home/thumbnailers/gdk-pixbuf-thumbnailer.thumbnailer", Array("""
            [Thumbnailer Entry]
            Exec=/usr/bin/true %o
            MimeType=image/x-xpixmap;
            """.utf8))
        let found = ThumbnailerEntry.installed(dataHome: dir.appending("home"), dataDirectories: [dir.appending("none"), "/usr/share"])
        let gdk = try #require(found.first { $0.name == "gdk-pixbuf-thumbnailer" })
        #expect(gdk.exec == "/usr/bin/true %o", "the user's file hides the system's of the same name")
        #expect(found.filter { $0.name == "gdk-pixbuf-thumbnailer" }.count == 1)
    }

    @Test func debiansGdkPixbufThumbnailerMakesAThumbnailInTheSandbox() async throws {
        let dir = TemporaryDirectory()
        let picture = try Self.xpm(dir)
        let entry = try #require(Self.gdkPixbuf)
        var types = ContentTypeRegistry()
        let provider = ThumbnailerPluginProvider(entries: [entry], types: &types)
        let type = types.type(ofFileAt: picture)
        #expect(types.mimeType(of: type) == "image/x-xpixmap")
        #expect(provider.contentTypes.contains(type))
        #expect(!provider.contentTypes.contains(.png), "a type thumbcache decodes stays its own")

        let generator = ThumbnailGenerator(store: try ThumbnailStore.open(directory: dir.appending("store")),
                                           providers: [provider, ImageThumbnailProvider()], types: types)
        let image = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: picture, size: 96, representationTypes: .thumbnail)).image()
        #expect((image.width, image.height) == (96, 64))
        let left = Array(image.pixels[(32 * 96 + 2) * 4..<(32 * 96 + 2) * 4 + 3])
        let right = Array(image.pixels[(32 * 96 + 93) * 4..<(32 * 96 + 93) * 4 + 3])
        #expect(left[0] > 200 && left[2] < 60 && right[2] > 200 && right[0] < 60, "\(left) \(right)")
    }

    @Test func aPluginCannotWriteOutsideItsOutput() throws {
        let dir = TemporaryDirectory()
        let input = try dir.write("input.png", ImageEncoder.png(TestPictures.source(width: 40, height: 30)))
        let escape = dir.appending("escaped")
        let hostile = Self.sh("""
            touch \(escape) 2>/dev/null; touch /usr/escaped 2>/dev/null; echo x >> "$1" 2>/dev/null; \
            mkdir -p \(FilePaths.home)/.cache 2>/dev/null && touch \(FilePaths.home)/.cache/escaped 2>/dev/null; \
            cat /proc/net/dev | grep -c ":" > /tmp/interfaces; cp "$1" "$2"
            """)
        let (bytes, interfaces) = try PluginSandbox.run(hostile, input: input, size: 128) { output in
            (try Data(contentsOf: URL(fileURLWithPath: output)),
             try String(contentsOfFile: (output as NSString).deletingLastPathComponent + "/interfaces", encoding: .utf8))
        }
        #expect(Array(bytes) == Array(try Data(contentsOf: URL(fileURLWithPath: input))), "the input was read-only and reached the output")
        #expect(!FileManager.default.fileExists(atPath: escape))
        #expect(!FileManager.default.fileExists(atPath: "/usr/escaped"))
        #expect(!FileManager.default.fileExists(atPath: FilePaths.home + "/.cache/escaped"))
        #expect(interfaces.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "only loopback: no network")
    }

    @Test func aPluginThatHangsIsKilledAtItsTimeLimit() throws {
        let dir = TemporaryDirectory()
        let input = try dir.write("input.png", ImageEncoder.png(TestPictures.source(width: 40, height: 30)))
        let start = Date()
        // A duration of its own, so that only this run's sleeps are counted (`sleep` takes fractions).
        let sleep = "sleep 300.\(UInt32.random(in: 1...UInt32.max))"
        #expect {
            try PluginSandbox.run(Self.sh("\(sleep) & \(sleep)"), input: input, size: 128, limits: .init(timeout: 1)) { _ in () }
        } throws: { error in
            "\(error)".contains("took longer than 1.0 s")
        }
        #expect(Date().timeIntervalSince(start) < 10)
        // Nothing of it is left running: its PID namespace ends with it, which the kernel finishes
        // a moment after the kill returns; under a full run's load that moment passed 5 s (twice
        // in CI), so it is given 20.
        var left = ""
        let deadline = Date().addingTimeInterval(20)
        repeat {
            left = try FixtureTools.run("sh", ["-c", "pgrep -fx '\(sleep)' | wc -l"]).trimmingCharacters(in: .whitespacesAndNewlines)
            if left != "0" { usleep(50_000) }
        } while left != "0" && Date() < deadline
        #expect(left == "0")
    }

    @Test func aFailedPluginIsRecordedPerContentAndPlugin() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.xpm(dir, "tree/picture.xpm")
        let store = try ThumbnailStore.open(directory: dir.appending("store"))
        func warm(_ entry: ThumbnailerEntry) async -> WarmSummary {
            var types = ContentTypeRegistry()
            let provider = ThumbnailerPluginProvider(entries: [entry], types: &types)
            return await Warmer(store: store, providers: [provider, ImageThumbnailProvider()], types: types)
                .warm([dir.appending("tree")], options: .init(jobs: 1))
        }
        let broken = Self.sh("echo cannot read this >&2; exit 3", name: "broken")
        let first = await warm(broken)
        #expect(first.failed == 1)
        #expect(first.failures.keys.contains { $0.contains("thumbnailer plug-in broken: exited with status 3: cannot read this") }, "\(first.failures)")
        let again = await warm(broken)
        #expect(again.failures.keys.contains { $0.contains("recorded earlier") }, "not run again: \(again.failures)")
        let other = await warm(try #require(Self.gdkPixbuf))
        #expect(other.generated == 1 && other.failed == 0, "another plug-in tries the same bytes: \(other.failures)")
    }
}
