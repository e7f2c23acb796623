import Foundation
import Testing
import ThumbcacheTestSupport
@testable import Thumbcache

/// The freedesktop thumbnail cache, checked by its real consumers: GNOME's own thumbnail factory
/// (libgnome-desktop through Python's `gi`) and GLib's URI escaping.
@Suite(.serialized)
struct FreedesktopTests {
    typealias Size = FreedesktopThumbnailCache.Size

    /// Runs a Python script with GNOME's libraries, `XDG_CACHE_HOME` set to `cacheHome`.
    static func gnome(cacheHome: String, _ script: String, _ arguments: [String]) throws -> String {
        try FixtureTools.run("XDG_CACHE_HOME=\(cacheHome)", ["GSETTINGS_SCHEMA_DIR=/usr/share/glib-2.0/schemas", "/usr/bin/python3", "-c", """
            import gi, json, os, sys
            gi.require_version('GnomeDesktop', '3.0')
            from gi.repository import GnomeDesktop, GLib
            """ + "\n" + script] + arguments)
    }

    /// What `DesktopThumbnailFactory.lookup(uri, mtime)` finds for each file in each size
    /// directory: the thumbnail's path, or nil.
    static func lookup(cacheHome: String, _ files: [String], sizes: [Size]) throws -> [String: [String: String?]] {
        let names = sizes.map { ["normal": "NORMAL", "large": "LARGE", "x-large": "XLARGE", "xx-large": "XXLARGE"][$0.rawValue]! }
        let printed = try gnome(cacheHome: cacheHome, """
            out = {}
            for size in sys.argv[1].split(','):
                f = GnomeDesktop.DesktopThumbnailFactory.new(getattr(GnomeDesktop.DesktopThumbnailSize, size))
                out[size] = {p: f.lookup(GLib.filename_to_uri(p, None), int(os.stat(p).st_mtime)) for p in sys.argv[2:]}
            print(json.dumps(out))
            """, [names.joined(separator: ",")] + files)
        let decoded = try JSONDecoder().decode([String: [String: String?]].self, from: Data(printed.utf8))
        return Dictionary(uniqueKeysWithValues: zip(sizes.map(\.rawValue), names.map { decoded[$0] ?? [:] }))
    }

    /// A tree of kinds a file manager shows: photos (one large, one small with alpha), a text
    /// file, a broken JPEG, and a name that needs escaping in its URI.
    static func tree(_ dir: TemporaryDirectory) throws -> (files: [String], broken: String) {
        try FileManager.default.createDirectory(atPath: dir.appending("tree/sub dir"), withIntermediateDirectories: true)
        let files = [
            try dir.write("tree/photo.jpg", ImageEncoder.jpeg(TestPictures.source(width: 1200, height: 800))),
            try dir.write("tree/sub dir/small #1 (ü).png", ImageEncoder.png(TestPictures.source(width: 60, height: 40, alpha: true))),
            try dir.write("tree/notes.txt", Array(String(repeating: "a line of text\n", count: 30).utf8)),
        ]
        let broken = try dir.write("tree/broken.jpg", [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 64))
        return (files, broken)
    }

    static func warm(_ root: String, store: ThumbnailStore, cache: FreedesktopThumbnailCache, sizes: [Size] = [.normal, .large]) async -> WarmSummary {
        await Warmer(store: store).warm([root], options: .init(jobs: 2, index: nil, freedesktop: FreedesktopExport(cache: cache, sizes: sizes)))
    }

    /// ``tree(_:)`` warmed once with export into `dir/xdg/thumbnails`.
    struct Warmed {
        var files: [String]
        var broken: String
        var store: ThumbnailStore
        var cache: FreedesktopThumbnailCache
        var summary: WarmSummary

        init(_ dir: TemporaryDirectory, sizes: [Size] = [.normal, .large]) async throws {
            (files, broken) = try FreedesktopTests.tree(dir)
            store = try ThumbnailStore.open(directory: dir.appending("store"))
            cache = FreedesktopThumbnailCache(directory: dir.appending("xdg/thumbnails"))
            summary = await FreedesktopTests.warm(dir.appending("tree"), store: store, cache: cache, sizes: sizes)
        }
    }

    @Test func uriAndNameAreGLibsAndMD5s() throws {
        let dir = TemporaryDirectory()
        let paths = ["/tmp/plain.png", "/tmp/a b/ü#?%;[]{}!$&'()*+,=:@~^`|\\\"<>.png", "/home/me/日本語/\u{1}x.jpg"]
        let printed = try Self.gnome(cacheHome: dir.path, """
            import hashlib
            print(json.dumps([[GLib.filename_to_uri(p, None), hashlib.md5(GLib.filename_to_uri(p, None).encode()).hexdigest()] for p in sys.argv[1:]]))
            """, paths)
        let expected = try JSONDecoder().decode([[String]].self, from: Data(printed.utf8))
        for (path, pair) in zip(paths, expected) {
            #expect(FileURI.of(path: path) == pair[0])
            #expect(FreedesktopThumbnailCache.name(forURI: pair[0]) == pair[1] + ".png")
            #expect(FileURI.path(of: pair[0]) == path)
        }
        #expect(MD5.hex([UInt8]()) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(MD5.hex(Array(String(repeating: "x", count: 200).utf8)) == "30a83621ce5422fbdfdd539777458c78")  // four blocks
    }

    @Test func gnomeFindsEveryExportedThumbnailValidInEverySize() async throws {
        let dir = TemporaryDirectory()
        let warmed = try await Warmed(dir, sizes: Size.allCases)
        let (files, broken, cache, summary) = (warmed.files, warmed.broken, warmed.cache, warmed.summary)
        #expect(summary.freedesktop?.written == files.count * 4, "\(summary)")
        #expect(summary.freedesktop?.failuresRecorded == 1)
        #expect(summary.freedesktop?.errors == [])

        let found = try Self.lookup(cacheHome: dir.appending("xdg"), files + [broken], sizes: Size.allCases)
        for size in Size.allCases {
            for file in files {
                let uri = FileURI.of(path: file)
                #expect(found[size.rawValue]?[file] == .some(cache.path(forURI: uri, size: size)), "\(size) \(file)")
                let path = cache.path(forURI: uri, size: size)
                let image = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: path))), name: path)
                #expect(max(image.width, image.height) <= size.pixels)
                #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
                // 8-bit RGBA: colour type 6 at byte 25, bit depth 8 at byte 24.
                let head = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(26))
                #expect(head[24] == 8 && head[25] == 6, "\(path)")
            }
            #expect(found[size.rawValue]?[broken] == .some(nil))
        }
        // The photo fills its boxes; the 60×40 picture is never enlarged.
        let photo = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: cache.path(forURI: FileURI.of(path: files[0]), size: .xxLarge)))), name: "")
        #expect((photo.width, photo.height) == (1024, 683))
        let small = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: cache.path(forURI: FileURI.of(path: files[1]), size: .large)))), name: "")
        #expect((small.width, small.height) == (60, 40))
        for sub in ["", "/normal", "/large", "/x-large", "/xx-large", "/fail", "/fail/thumbcache-\(thumbcacheVersion)"] {
            #expect(try FileManager.default.attributesOfItem(atPath: cache.directory + sub)[.posixPermissions] as? Int == 0o700, "\(sub)")
        }

        let keys = try #require(PNGText.read(path: cache.path(forURI: FileURI.of(path: files[0]), size: .large)))
        #expect(keys["Thumb::Mimetype"] == "image/jpeg")
        #expect(keys["Thumb::Size"] == String(try FileManager.default.attributesOfItem(atPath: files[0])[.size] as! Int))
        #expect(keys["Thumb::Image::Width"] == "1200" && keys["Thumb::Image::Height"] == "800")
        let failure = try #require(PNGText.read(path: cache.failurePath(forURI: FileURI.of(path: broken))))
        #expect(failure["Thumb::URI"] == FileURI.of(path: broken))
    }

    @Test func aSecondWarmWritesNothingAndAChangedFileIsInvalidUntilTheNext() async throws {
        let dir = TemporaryDirectory()
        let warmed = try await Warmed(dir)
        let (files, store, cache) = (warmed.files, warmed.store, warmed.cache)
        let before = try files.map { try FileManager.default.attributesOfItem(atPath: cache.path(forURI: FileURI.of(path: $0), size: .normal))[.systemFileNumber] as? Int }

        let again = await Self.warm(dir.appending("tree"), store: store, cache: cache)
        #expect(again.freedesktop?.written == 0)
        #expect(again.freedesktop?.unchanged == files.count)
        let after = try files.map { try FileManager.default.attributesOfItem(atPath: cache.path(forURI: FileURI.of(path: $0), size: .normal))[.systemFileNumber] as? Int }
        #expect(before == after, "no thumbnail was replaced")

        // The text file changes (new bytes, a later modification time): GNOME finds none for it.
        let changed = files[2]
        try Data(String(repeating: "other text\n", count: 12).utf8).write(to: URL(fileURLWithPath: changed))
        let later = Date().addingTimeInterval(5)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: changed)
        var found = try Self.lookup(cacheHome: dir.appending("xdg"), files, sizes: [.normal, .large])
        #expect(found["normal"]?[changed] == .some(nil) && found["large"]?[changed] == .some(nil))
        #expect(found["normal"]?[files[0]] != .some(nil))

        let third = await Self.warm(dir.appending("tree"), store: store, cache: cache)
        #expect(third.freedesktop?.written == 2)  // the changed file, in two sizes
        found = try Self.lookup(cacheHome: dir.appending("xdg"), files, sizes: [.normal, .large])
        #expect(found["normal"]?[changed] != .some(nil) && found["large"]?[changed] != .some(nil))
    }

    @Test func theThumbnailCacheItselfIsNeverThumbnailed() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.tree(dir)
        let store = try ThumbnailStore.open(directory: dir.appending("store"))
        let cache = FreedesktopThumbnailCache(directory: dir.appending("tree/.cache/thumbnails"))
        let first = await Self.warm(dir.appending("tree"), store: store, cache: cache)
        let second = await Self.warm(dir.appending("tree"), store: store, cache: cache)
        #expect(first.seen == 4 && second.seen == 4, "the cache's \(first.freedesktop?.written ?? 0) PNGs are not walked")
    }

    /// The plug-in's call (`freedesktop thumbnail --size N IN OUT`, read without ArgumentParser)
    /// writes what the same command does when any other option sends it through ArgumentParser:
    /// made directly where there is no cache, and from the cache where there is one.
    @Test func thePlugInsCallReadWithoutArgumentParserDoesWhatTheCommandDoes() throws {
        let dir = TemporaryDirectory()
        let font = dir.appending("sample.ttf")
        try FileManager.default.copyItem(atPath: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", toPath: font)
        for cached in [false, true] {
            let cache = dir.appending(cached ? "cache" : "no-cache")
            if cached { _ = try ThumbnailStore.open(directory: cache) }
            var outputs: [[UInt8]] = []
            for extra in [[], ["--timeout", "20"]] {
                let out = dir.appending("out-\(cached)-\(extra.count).png")
                let child = try ChildProcess(program: "thumbcache", arguments: ["freedesktop", "thumbnail"] + extra + ["--size", "96", "file://" + font, out],
                                             environment: ProcessInfo.processInfo.environment.merging(["THUMBCACHE_DIR": cache]) { $1 })
                #expect(child.wait(timeout: 60).termination == .exited(0))
                outputs.append(Array(try Data(contentsOf: URL(fileURLWithPath: out))))
            }
            #expect(outputs[0] == outputs[1] && outputs[0].starts(with: [0x89, 0x50, 0x4E, 0x47]))
            #expect(ThumbnailStore.exists(directory: cache) == cached, "no cache is made where there was none")
        }
    }

    /// `freedesktop install` refuses a program GNOME's sandbox cannot see (this build's, outside
    /// /usr), says why and what to do instead, and writes nothing; `--anyway` installs it.
    @Test func installRefusesAProgramGNOMEsSandboxCannotRun() throws {
        guard !ChildProcess.productsDirectory.hasPrefix("/usr/") else { return }  // a checkout under /usr would be visible
        let dir = TemporaryDirectory()
        let target = dir.appending("thumbnailers")
        let refused = try ChildProcess.run("thumbcache", ["freedesktop", "install", "--directory", target])
        #expect(refused.status == .exited(1))
        #expect(refused.stderr.contains("sandbox") && refused.stderr.contains("Debian package") && refused.stderr.contains("--anyway"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target + "/thumbcache.thumbnailer"))
        let forced = try ChildProcess.run("thumbcache", ["freedesktop", "install", "--directory", target, "--anyway"])
        #expect(forced.status == .exited(0) && FileManager.default.fileExists(atPath: target + "/thumbcache.thumbnailer"))
        // A directory that cannot be made: the system's reason, in words.
        let blocked = try ChildProcess.run("thumbcache", ["freedesktop", "install", "--directory", target + "/thumbcache.thumbnailer/sub", "--anyway"])
        #expect(blocked.status == .exited(1) && blocked.stderr.contains("cannot write") && blocked.stderr.contains("Not a directory"), "\(blocked.stderr)")
    }

    /// GNOME's factory, finding thumbcache's `.thumbnailer` for a type only it declares (a font:
    /// the data directories hold nothing else), runs it in GNOME's own bubblewrap sandbox, which
    /// sees /usr only. So a private mount namespace puts the built programs and the Swift runtime
    /// in a tmpfs over /usr/local, as an install would (root needed, as CI has).
    @Test func gnomesFactoryRunsThumbcacheAsItsPlugIn() throws {
        let dir = TemporaryDirectory()
        let font = dir.appending("sample.ttf")
        try FileManager.default.copyItem(atPath: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", toPath: font)
        let products = ChildProcess.productsDirectory
        let script = try dir.write("run.sh", Array("""
            set -e
            mount -t tmpfs tmpfs /usr/local
            mkdir -p /usr/local/bin
            for program in thumbcache thumbcache-thumbnailer thumbcache-worker thumbcache-worker-vector thumbcache-worker-heavy thumbcache-worker-documents thumbcache-worker-media; do
              cp "\(products)/$program" /usr/local/bin/
            done
            # What the loader finds outside /usr and /lib (the Swift runtime), found there through $ORIGIN.
            for lib in $(ldd /usr/local/bin/thumbcache* | awk '$3 ~ /^\\// && $3 !~ /^\\/(usr|lib)/ { print $3 }' | sort -u); do
              cp "$lib" /usr/local/bin/
            done
            /usr/local/bin/thumbcache freedesktop install --directory '\(dir.appending("data/thumbnailers"))' >&2
            # The plug-in's own program, found beside thumbcache, is what GNOME runs.
            grep -q '^Exec=/usr/local/bin/thumbcache-thumbnailer --size %s %i %o$' '\(dir.appending("data/thumbnailers/thumbcache.thumbnailer"))'
            export GSETTINGS_SCHEMA_DIR=/usr/share/glib-2.0/schemas XDG_DATA_DIRS='\(dir.appending("data"))' \\
              XDG_DATA_HOME='\(dir.appending("none"))' XDG_CACHE_HOME='\(dir.appending("cache"))'
            /usr/bin/python3 -c '
            import gi, sys
            gi.require_version("GnomeDesktop", "3.0")
            from gi.repository import GnomeDesktop, GLib
            f = GnomeDesktop.DesktopThumbnailFactory.new(GnomeDesktop.DesktopThumbnailSize.LARGE)
            uri = GLib.filename_to_uri(sys.argv[1], None)
            assert f.can_thumbnail(uri, "font/ttf", 0)
            f.generate_thumbnail(uri, "font/ttf", None).savev(sys.argv[2], "png", [], [])
            ' '\(font)' '\(dir.appending("gnome.png"))'
            /usr/local/bin/thumbcache thumbnail --size 256 '\(font)' -o '\(dir.appending("direct.png"))'
            """.utf8))
        _ = try FixtureTools.run("unshare", ["--mount", "--propagation", "private", "bash", script])
        let gnome = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: dir.appending("gnome.png")))), name: "gnome.png")
        let direct = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: dir.appending("direct.png")))), name: "direct.png")
        #expect((gnome.width, gnome.height) == (direct.width, direct.height))
        // GNOME's pixbuf, saved again as PNG: thumbcache's pixels (a font's "Aa"), not an icon.
        #expect(TestPictures.premultipliedPSNR(gnome, direct) > 45)
        #expect(!FileManager.default.fileExists(atPath: dir.appending("cache/thumbcache")), "no cache made where there was none")
    }

    @Test func cleaningRemovesThumbnailsOfGoneAndChangedFilesThenTheLeastRecentlyUsed() async throws {
        let dir = TemporaryDirectory()
        let warmed = try await Warmed(dir)
        let (files, broken, cache) = (warmed.files, warmed.broken, warmed.cache)
        // Another program's thumbnail of a remote file (kept: nothing here can check it), and a
        // writer's temporary file left two hours ago.
        let pixel = RGBAImage(width: 1, height: 1, pixels: [1, 2, 3, 255], hasAlpha: true)
        try cache.write(pixel, for: .init(uri: "sftp://host/photo.jpg", modificationTime: 1, size: 1), size: .normal, mimeType: nil)
        let leftover = try dir.write("xdg/thumbnails/large/.thumbcache-1-2.png", [1, 2, 3])
        var old = timespec(tv_sec: time(nil) - 7200, tv_nsec: 0)
        _ = withUnsafePointer(to: &old) { p in [p.pointee, p.pointee].withUnsafeBufferPointer { utimensat(AT_FDCWD, leftover, $0.baseAddress, 0) } }

        let untouched = cache.clean()
        #expect(untouched.stale == 0 && untouched.evicted == 0 && untouched.notLocal == 1 && untouched.temporaryFiles == 1)
        #expect(untouched.examined == files.count * 2 + 2)  // two sizes, the failure entry, the remote file's

        try FileManager.default.removeItem(atPath: files[0])
        try Data("changed".utf8).write(to: URL(fileURLWithPath: files[2]))
        try FileManager.default.removeItem(atPath: broken)
        let dry = cache.clean(dryRun: true)
        #expect(dry.stale == 5)  // two sizes of two files, and the failure entry
        #expect(FileManager.default.fileExists(atPath: cache.path(forURI: FileURI.of(path: files[0]), size: .normal)))

        let cleaned = cache.clean()
        #expect(cleaned.stale == 5 && cleaned.errors == [])
        for file in [files[0], files[2]] {
            for size in [Size.normal, .large] { #expect(!FileManager.default.fileExists(atPath: cache.path(forURI: FileURI.of(path: file), size: size))) }
        }
        #expect(!FileManager.default.fileExists(atPath: cache.failurePath(forURI: FileURI.of(path: broken))))
        let found = try Self.lookup(cacheHome: dir.appending("xdg"), [files[1]], sizes: [.normal, .large])
        #expect(found["normal"]?[files[1]] != .some(nil) && found["large"]?[files[1]] != .some(nil))

        // Within a budget: the least recently used go first, what remains fits.
        let remote = cache.path(forURI: "sftp://host/photo.jpg", size: .normal)
        var long = timespec(tv_sec: time(nil) - 86_400 * 30, tv_nsec: 0)
        _ = withUnsafePointer(to: &long) { p in [p.pointee, p.pointee].withUnsafeBufferPointer { utimensat(AT_FDCWD, remote, $0.baseAddress, 0) } }
        let small = try FileManager.default.attributesOfItem(atPath: cache.path(forURI: FileURI.of(path: files[1]), size: .normal))[.size] as! Int
        let large = try FileManager.default.attributesOfItem(atPath: cache.path(forURI: FileURI.of(path: files[1]), size: .large))[.size] as! Int
        let budget = cache.clean(maxBytes: small + large)
        #expect(budget.evicted == 1 && budget.bytesAfter <= small + large)
        #expect(!FileManager.default.fileExists(atPath: remote), "the one used longest ago")
    }

    /// A thumbnail GNOME's factory saved (`save_thumbnail`: its URI and MTime keys) serves a
    /// request without decoding the file, while the file is unchanged; a touched file is decoded.
    @Test func aValidThumbnailAnotherProgramMadeServesARequest() async throws {
        let dir = TemporaryDirectory()
        let photo = try dir.write("photo.png", ImageEncoder.png(TestPictures.source(width: 800, height: 600)))
        // GNOME's thumbnail is solid red: whatever comes back red came from it, not from the photo.
        _ = try Self.gnome(cacheHome: dir.appending("xdg"), """
            gi.require_version('GdkPixbuf', '2.0')
            from gi.repository import GdkPixbuf
            p = GdkPixbuf.Pixbuf.new(GdkPixbuf.Colorspace.RGB, True, 8, 256, 192)
            p.fill(0xff0000ff)
            f = GnomeDesktop.DesktopThumbnailFactory.new(GnomeDesktop.DesktopThumbnailSize.LARGE)
            f.save_thumbnail(p, GLib.filename_to_uri(sys.argv[1], None), int(os.stat(sys.argv[1]).st_mtime))
            """, [photo])
        let cache = FreedesktopThumbnailCache(directory: dir.appending("xdg/thumbnails"))
        #expect(FileManager.default.fileExists(atPath: cache.path(forURI: FileURI.of(path: photo), size: .large)))

        let generator = ThumbnailGenerator(store: try ThumbnailStore.open(directory: dir.appending("store")), standardThumbnails: cache)
        let image = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: photo, size: 200, representationTypes: .thumbnail)).image()
        #expect((image.width, image.height) == (200, 150))
        #expect(Array(image.pixels[0..<4]) == [255, 0, 0, 255])
        #expect(generator.importCount == 1 && generator.generationCount == 0)

        // Too small to serve a larger box: a 256-pixel thumbnail is not enlarged to 400.
        let third = ThumbnailGenerator(store: try ThumbnailStore.open(directory: dir.appending("store3")), standardThumbnails: cache)
        _ = try await third.bestRepresentation(for: ThumbnailRequest(fileAt: photo, size: 400, representationTypes: .thumbnail))
        #expect(third.importCount == 0 && third.generationCount == 1)

        // Touched: GNOME's thumbnail no longer matches the file's modification time.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(10)], ofItemAtPath: photo)
        let other = ThumbnailGenerator(store: try ThumbnailStore.open(directory: dir.appending("store2")), standardThumbnails: cache)
        let decoded = try await other.bestRepresentation(for: ThumbnailRequest(fileAt: photo, size: 200, representationTypes: .thumbnail)).image()
        #expect(Array(decoded.pixels[0..<4]) != [255, 0, 0, 255])
        #expect(other.importCount == 0 && other.generationCount == 1)

    }
}
