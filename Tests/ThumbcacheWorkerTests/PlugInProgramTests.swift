import Foundation
import Testing
import ThumbcacheTestSupport
@testable import Thumbcache
import ThumbcacheWorker

/// `thumbcache-thumbnailer`, the program the `.thumbnailer` entry runs: the same bytes as
/// `thumbcache freedesktop thumbnail` for every way a call can go (its image or documents worker
/// forked, another family's spawned, a text file or a cache handed to `thumbcache`), the same errors,
/// and a forked worker confined as a spawned one is.
@Suite(.serialized)
struct PlugInProgramTests {
    /// Runs `program` with `THUMBCACHE_DIR` set to `cache`: how it ended, and its standard error.
    static func run(_ program: String, _ arguments: [String], cache: String) throws -> (ChildProcess.Termination, String) {
        let child = try ChildProcess(program: program, arguments: arguments,
                                     environment: ProcessInfo.processInfo.environment.merging(["THUMBCACHE_DIR": cache]) { $1 })
        let (end, stderr) = child.wait(timeout: 60)
        return (end, stderr)
    }

    static func fixtures(in dir: TemporaryDirectory) throws -> [String] {
        let photo = try dir.write("photo.jpg", ImageEncoder.jpeg(TestPictures.source(width: 640, height: 480)))
        let graphic = try dir.write("graphic.png", ImageEncoder.png(TestPictures.graphic()))
        let font = dir.appending("font.ttf")  // the documents worker's, forked too
        try FileManager.default.copyItem(atPath: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", toPath: font)
        let pdf = try dir.write("report.pdf", PDFFixture.document(pages: 1, width: 612, height: 792, cropBox: nil, title: "Report", author: "A",
                                                                  text: "Hello thumbcache", pageTexts: nil))
        let text = try dir.write("notes.txt", Array("No signature: only the content types say this is text.\n".utf8))
        return [photo, graphic, font, pdf, text]
    }

    @Test func writesTheBytesThumbcacheWritesWithoutACache() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("no-cache")
        let (ours, theirs) = (dir.appending("ours.png"), dir.appending("theirs.png"))
        for file in try Self.fixtures(in: dir) {
            #expect(try Self.run("thumbcache", ["freedesktop", "thumbnail", "--size", "96", file, theirs], cache: cache).0 == .exited(0))
            let expected = Array(try Data(contentsOf: URL(fileURLWithPath: theirs)))
            let image = try ImageDecoder.png(expected, name: theirs)
            #expect(max(image.width, image.height) == 96)
            // The image worker's program answers the same call: the package installs it under both names.
            for program in ["thumbcache-thumbnailer", "thumbcache-worker"] {
                let (end, stderr) = try Self.run(program, ["--size", "96", file, ours], cache: cache)
                #expect(end == .exited(0), "\(program) \(file): \(stderr)")
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: ours))) == expected, "\(program) \(file)")
                try FileManager.default.removeItem(atPath: ours)
            }
        }
        #expect(!ThumbnailStore.exists(directory: cache), "no cache is made where there was none")
    }

    @Test func handsACallToThumbcacheWhereACacheExists() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        _ = try ThumbnailStore.open(directory: cache)
        let photo = try Self.fixtures(in: dir)[0]
        let (end, stderr) = try Self.run("thumbcache-thumbnailer", ["--size", "128", photo, dir.appending("out.png")], cache: cache)
        #expect(end == .exited(0), "\(stderr)")
        // Stored, as `thumbcache freedesktop thumbnail` stores what it makes: the call was handed on.
        #expect(try ThumbnailStore.open(directory: cache).statistics().thumbnails == 1)
        _ = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: dir.appending("out.png")))), name: "out.png")
    }

    /// A JPEG's, a PNG's or a PDF's worker is forked by a constructor, before the program reads
    /// the file's type with the catalogue (`strace`: the fork comes before the catalogue's read of
    /// 4096 bytes), and is the call's only one; a font's is forked the usual way, later. Where the
    /// call is handed to `thumbcache` (a cache exists), that worker is killed before the `exec`.
    @Test func forksItsWorkerAtStartForAPictureOrAPDF() throws {
        let dir = TemporaryDirectory()
        let (photo, graphic, font, pdf) = try { let f = try Self.fixtures(in: dir); return (f[0], f[1], f[2], f[3]) }()
        let program = ChildProcess.productsDirectory + "/thumbcache-thumbnailer"
        func traced(_ file: String, cache: String) throws -> (lines: [String], parent: String) {
            try SystemCallTrace.run(program, ["--size", "96", file, dir.appending("out.png")], calls: "execve,clone,kill,pread64",
                                    environment: ["THUMBCACHE_DIR=" + cache], in: dir)
        }
        for (file, atStart) in [(photo, true), (graphic, true), (pdf, true), (font, false)] {
            let (lines, parent) = try traced(file, cache: dir.appending("no-cache"))
            let forks = SystemCallTrace.forks(in: lines, by: parent).map(\.line)
            let catalogueRead = try #require(lines.firstIndex { $0.hasPrefix(parent + " ") && $0.contains("pread64(") && $0.contains(", 4096, 0)") })
            #expect(forks.count == 1, "\(file): \(forks.count) forks")
            #expect(forks.first.map { $0 < catalogueRead } == atStart, "\(file): forked \(atStart ? "after" : "before") the catalogue's read")
        }
        let cache = dir.appending("cache")
        _ = try ThumbnailStore.open(directory: cache)
        let (lines, parent) = try traced(photo, cache: cache)
        let kill = try #require(lines.firstIndex { $0.hasPrefix(parent + " ") && $0.contains("kill(") && $0.contains("SIGKILL") }, "the worker forked at start was left")
        let handedOn = try #require(lines.indices.first { $0 > 0 && lines[$0].hasPrefix(parent + " ") && lines[$0].contains("execve(") }, "not handed on")
        #expect(kill < handedOn)
    }

    @Test func saysWhichFileFailedAndWhy() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("no-cache")
        let whole = try ImageEncoder.jpeg(TestPictures.source(width: 640, height: 480))
        let truncated = try dir.write("truncated.jpg", Array(whole.prefix(whole.count / 2)))
        let empty = try dir.write("empty.png", [])
        // The forked documents worker's failures too.
        let pdf = PDFFixture.document(pages: 1, width: 612, height: 792, cropBox: nil, title: "T", author: "A", text: "Hello", pageTexts: nil)
        let cutPDF = try dir.write("cut.pdf", Array(pdf.prefix(pdf.count / 2)))
        let font = Array(try Data(contentsOf: URL(fileURLWithPath: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")))
        let cutFont = try dir.write("cut.ttf", Array(font.prefix(2000)))
        for (file, reason) in [(truncated, "truncated"), (dir.appending("missing.jpg"), "No such file"), (empty, "empty"),
                               (cutPDF, "poppler"), (cutFont, "FreeType")] {
            let (end, stderr) = try Self.run("thumbcache-thumbnailer", ["--size", "128", file, dir.appending("out.png")], cache: cache)
            #expect(end == .exited(1), "\(file): \(stderr)")
            #expect(stderr.contains(file) && stderr.contains(reason), "\(stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appending("out.png")), "nothing written for a file that failed")
        let (end, stderr) = try Self.run("thumbcache-thumbnailer", ["--size", "0", truncated], cache: cache)
        #expect(end == .exited(2) && stderr.contains("Usage: thumbcache-thumbnailer --size N INPUT OUTPUT"), "\(stderr)")
    }

    /// The image and documents workers are forked (the program has one thread), and confine
    /// themselves with every layer the family's spawned worker applies here; the other families
    /// are spawned.
    @Test(arguments: WorkerFamily.allCases)
    func aForkedWorkerIsConfinedAsASpawnedOne(_ family: WorkerFamily) throws {
        let arguments = ["--print-confinement"] + (family == .images ? [] : [family.rawValue])
        let answer = try ChildProcess.run("thumbcache-thumbnailer", arguments)
        #expect(answer.status == .exited(0), "\(answer.stderr)")
        let forks = [.images, .documents].contains(family)
        #expect(answer.stdout.first == "\(forks ? "forked" : "spawned") \(family.rawValue) worker")
        let pool = WorkerPool(.init(workers: 1))
        defer { pool.close() }
        let spawned = try pool.confinement(of: family)
        #expect(!spawned.forked)
        #expect(Array(answer.stdout.dropFirst()) == spawned.layers)
        #expect(spawned.layers.contains("seccomp"))
    }

    @Test func namesTheFamiliesItKnows() throws {
        let answer = try ChildProcess.run("thumbcache-thumbnailer", ["--print-confinement", "pictures"])
        #expect(answer.status == .exited(2) && answer.stderr.contains("no worker family pictures (images, vector"), "\(answer.stderr)")
    }

    /// A pool asked to fork from a process with more threads than one (this test's) spawns the
    /// family's program instead: the child of such a fork could find a lock held forever.
    @Test func aProcessWithThreadsSpawnsInsteadOfForking() throws {
        var configuration = WorkerPool.Configuration(workers: 1)
        configuration.fork = WorkerFork(families: [.images]) { _, _ in exit(3) }  // a forked worker would never say hello
        let pool = WorkerPool(configuration)
        defer { pool.close() }
        let (layers, forked) = try pool.confinement(of: .images)
        #expect(!forked && layers.contains("seccomp"))
        let dir = TemporaryDirectory()
        let photo = try dir.write("photo.jpg", ImageEncoder.jpeg(TestPictures.source(width: 64, height: 48)))
        #expect(try pool.thumbnail(ofFileAt: photo, options: ThumbnailOptions(maxWidth: 32, maxHeight: 32), format: nil).image.width == 32)
    }
}
