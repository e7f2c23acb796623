import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport

/// The C API and the Python module as programs in those languages use them: a C program and
/// Python scripts, each its own process over the built shared library, with the real workers
/// and a real cache.
struct BindingTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static var products: String { ChildProcess.productsDirectory }

    /// A folder of a photo, a note with a rare word in it, and a PNG cut short.
    static func folder(_ dir: TemporaryDirectory) throws -> (folder: String, photo: String, note: String, broken: String) {
        try FileManager.default.createDirectory(atPath: dir.appending("files"), withIntermediateDirectories: true)
        let png = try ImageEncoder.png(TestPictures.source())
        let photo = try dir.write("files/photo.png", png)
        let note = try dir.write("files/note.txt", Array("Remember to buy elderberries for the jam.\n".utf8))
        let broken = try dir.write("files/broken.png", Array(png.prefix(200)))
        return (dir.appending("files"), photo, note, broken)
    }

    /// The example C program, built against thumbcache.h and the shared library as an app would.
    @Test func aCProgramWarmsGetsAThumbnailAndSearches() throws {
        let dir = TemporaryDirectory()
        let files = try Self.folder(dir)
        let program = dir.appending("thumbnail")
        let compile = try ChildProcess.run("/usr/bin/cc", [
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", Self.root + "/Sources/C/CThumbcacheAPI/include",
            Self.root + "/Sources/Bindings/examples/thumbnail.c", "-o", program,
            "-L", Self.products, "-lThumbcacheC", "-Wl,-rpath," + Self.products,
        ])
        #expect(compile.status == .exited(0), "\(compile.stderr)")

        let arguments = [dir.appending("cache"), files.folder, files.photo, dir.appending("out.png"), "elderberries"]
        let first = try ChildProcess.run(program, arguments)
        #expect(first.status == .exited(0), "\(first.stderr)")
        #expect(first.stdout.first == "warmed 3 files: 2 made, 0 cached, 1 failed", "\(first.stdout)")
        // The warm made it, so the get finds it.
        #expect(first.stdout.contains("thumbnail 256x171 from the cache"), "\(first.stdout)")
        #expect(first.stdout.suffix(2) == ["1 found", files.note], "\(first.stdout)")
        let written = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: dir.appending("out.png")))), name: "out.png")
        #expect((written.width, written.height) == (256, 171))

        let second = try ChildProcess.run(program, arguments)
        #expect(second.status == .exited(0), "\(second.stderr)")
        #expect(second.stdout.contains("thumbnail 256x171 from the cache"), "\(second.stdout)")
        #expect(second.stdout.first?.hasPrefix("warmed 3 files: 0 made, 2 cached") == true, "\(second.stdout)")
    }

    /// `import thumbcache` in Python: the example script, then each failure as the exception its
    /// status names (with the file in the message), and one cache shared by eight threads, each
    /// of which reads its own failures' messages.
    @Test func pythonImportsThumbcache() throws {
        let dir = TemporaryDirectory()
        let files = try Self.folder(dir)
        let environment = ProcessInfo.processInfo.environment.merging([
            "PYTHONPATH": Self.root + "/Sources/Bindings/python", "THUMBCACHE_LIBRARY": Self.products + "/libThumbcacheC.so",
        ]) { $1 }
        let example = try ChildProcess(program: "/usr/bin/python3", arguments: [
            Self.root + "/Sources/Bindings/examples/thumbnail.py", dir.appending("cache"), files.folder, files.photo, dir.appending("out.png"), "elderberries",
        ], environment: environment)
        let (end, stderr) = example.wait()
        #expect(end == .exited(0), "\(stderr)")
        #expect(example.output.first == "warmed 3 files: 2 made, 0 cached, 1 failed", "\(example.output)")
        #expect(example.output.suffix(2) == ["1 found", files.note], "\(example.output)")

        let script = try dir.write("failures.py", Array("""
            import sys, threading, thumbcache
            cache_dir, photo, broken = sys.argv[1:]
            cache = thumbcache.Cache(cache_dir)
            def failure(call):
                try:
                    call()
                    print("no error")
                except thumbcache.ThumbcacheError as error:
                    print(error.status, str(error).splitlines()[0])
            failure(lambda: cache.get(broken, kind="thumbnail"))
            failure(lambda: cache.get(cache_dir + "/no such file.png"))
            failure(lambda: cache.search("kMDItemPixelWidth >= "))
            failure(lambda: thumbcache.Cache("/proc/no/cache/here"))
            fallback = cache.get(broken)
            print("fallback", fallback.kind, fallback.stands_in_because is not None)
            preview = cache.preview(photo, size=300)
            print("preview", preview.kind, preview.width, preview.height, preview.png[:4] == b"\\x89PNG")
            failure(lambda: cache.preview(photo, page=2))
            seen = []
            def work():
                thumb = cache.get(photo, size=64, scale=2)
                seen.append((thumb.width, thumb.height, len(thumb.rgba), thumb.rgba[3]))
            threads = [threading.Thread(target=work) for _ in range(8)]
            for thread in threads: thread.start()
            for thread in threads: thread.join()
            print("threads", len(seen), sorted(set(seen)))
            # Each thread reads its own failure's message, whatever the others did meanwhile.
            own = []
            def fail(n):
                for _ in range(20):
                    try:
                        cache.get("%s/missing-%d.png" % (cache_dir, n))
                    except thumbcache.ThumbcacheError as error:
                        own.append(("missing-%d.png" % n) in str(error))
            threads = [threading.Thread(target=fail, args=(n,)) for n in range(8)]
            for thread in threads: thread.start()
            for thread in threads: thread.join()
            print("own messages", len(own), all(own))
            print("version", thumbcache.version())
            cache.close()
            """.utf8))
        let failures = try ChildProcess(program: "/usr/bin/python3", arguments: [script, dir.appending("cache"), files.photo, files.broken],
                                        environment: environment)
        let ended = failures.wait()
        #expect(ended.termination == .exited(0), "\(ended.stderr)")
        let lines = failures.output
        #expect(lines.count == 10, "\(lines)")
        guard lines.count == 10 else { return }
        #expect(lines[0].hasPrefix("THUMBCACHE_ERROR_DECODE \(files.broken): "), "\(lines[0])")
        #expect(lines[1] == "THUMBCACHE_ERROR_UNREADABLE \(dir.appending("cache"))/no such file.png: No such file or directory", "\(lines[1])")
        #expect(lines[2].hasPrefix("THUMBCACHE_ERROR_QUERY "), "\(lines[2])")
        #expect(lines[3].hasPrefix("THUMBCACHE_ERROR_CACHE ") && lines[3].contains("/proc/no/cache/here"), "\(lines[3])")
        #expect(lines[4] == "fallback icon True", "\(lines[4])")
        // The stored JPEG comes to Python as PNG bytes too.
        #expect(lines[5] == "preview preview 300 200 True", "\(lines[5])")
        #expect(lines[6] == "THUMBCACHE_ERROR_UNSUPPORTED \(files.photo): no page 2: the file has 1 page", "\(lines[6])")
        #expect(lines[7] == "threads 8 [(128, 86, 44032, 255)]", "\(lines[7])")
        #expect(lines[8] == "own messages 160 True", "\(lines[8])")
        let version = try ChildProcess.run("thumbcache", ["--version"])
        #expect(lines[9] == "version " + (version.stdout.first ?? "?"))
    }

    /// Without the library, `import thumbcache` says what to install.
    @Test func pythonWithoutTheLibrarySaysWhatToInstall() throws {
        let dir = TemporaryDirectory()
        let environment = ProcessInfo.processInfo.environment.merging([
            "PYTHONPATH": Self.root + "/Sources/Bindings/python", "THUMBCACHE_LIBRARY": dir.appending("nowhere.so"),
        ]) { $1 }
        let missing = try ChildProcess(program: "/usr/bin/python3", arguments: ["-c", "import thumbcache"], environment: environment)
        let noLibrary = missing.wait()
        #expect(noLibrary.termination == .exited(1) && noLibrary.stderr.contains("ImportError: thumbcache: cannot load")
                && noLibrary.stderr.contains("libthumbcache1"), "\(noLibrary.stderr)")
    }
}

/// What thumbcache.h declares is what the library exports, no more and no less: a function
/// declared and missing would fail only when a program links it.
@Test func theHeaderDeclaresWhatTheLibraryExports() throws {
    let header = try String(contentsOfFile: BindingTests.root + "/Sources/C/CThumbcacheAPI/include/thumbcache.h", encoding: .utf8)
    let declared = Set(header.split(separator: "\n").compactMap { line -> String? in
        guard !line.hasPrefix(" "), !line.hasPrefix("#"), !line.hasPrefix("typedef"),
              let open = line.firstIndex(of: "("), let name = line[..<open].split(whereSeparator: { " *".contains($0) }).last,
              name.hasPrefix("thumbcache_") else { return nil }
        return String(name)
    })
    let nm = try ChildProcess.run("/usr/bin/nm", ["-D", "--defined-only", BindingTests.products + "/libThumbcacheC.so"])
    let exported = Set(nm.stdout.compactMap { line -> String? in
        let fields = line.split(separator: " ")
        return fields.count == 3 && fields[1] == "T" && fields[2].hasPrefix("thumbcache_") ? String(fields[2]) : nil
    })
    #expect(declared.count >= 20, "\(declared.sorted())")
    #expect(declared == exported, "declared only: \(declared.subtracting(exported).sorted()); exported only: \(exported.subtracting(declared).sorted())")
}

/// `Tools/check-package`: the packages built, installed with apt-get, used as a user would and
/// removed. It builds every program statically (about ten minutes) and installs into /usr while
/// it runs, so it runs only when asked (THUMBCACHE_CHECK_PACKAGE=1) on a machine that has the
/// tools (`Tools/setup --package`) and root.
@Test(.enabled(if: ProcessInfo.processInfo.environment["THUMBCACHE_CHECK_PACKAGE"] == "1" && getuid() == 0
                   && ["/usr/bin/patchelf", "/usr/bin/lintian", "/usr/bin/fakeroot", "/usr/bin/dpkg-shlibdeps"].allSatisfy {
                       FileManager.default.isExecutableFile(atPath: $0)
                   }))
func thePackagesInstallWorkAndUninstall() throws {
    let check = try ChildProcess.run(BindingTests.root + "/Tools/check-package", [])
    #expect(check.status == .exited(0), "\(check.stdout.joined(separator: "\n"))\n\(check.stderr)")
    #expect(check.stdout.filter { $0.hasPrefix("ok: ") }.count == 9, "\(check.stdout)")
}
