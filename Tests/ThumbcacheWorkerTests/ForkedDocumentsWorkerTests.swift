import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging
@testable import Thumbcache

/// A one-file `thumbcache get` of a document forks its documents worker from `thumbcache`
/// instead of starting `thumbcache-worker-documents` (Docs/SECURITY.md), a PDF's at start: the
/// same pixels and the same errors as a spawned worker's, and a child that keeps none of the
/// parent's shared memory (the store's LMDB map and lock table) nor its open files.
@Suite(.serialized)
struct ForkedDocumentsWorkerTests {
    static let pdf = PDFFixture.document(pages: 1, width: 612, height: 792, cropBox: nil, title: "Report", author: "A",
                                         text: "Hello thumbcache", pageTexts: nil)

    static func run(_ arguments: [String], cache: String) throws -> (ChildProcess.Termination, String) {
        let child = try ChildProcess(program: "thumbcache", arguments: arguments,
                                     environment: ProcessInfo.processInfo.environment.merging(["THUMBCACHE_DIR": cache]) { $1 })
        return child.wait(timeout: 60)
    }

    /// `thumbcache ARGUMENTS` under `strace -f`: its lines, and the parent's pid.
    static func traced(_ arguments: [String], in dir: TemporaryDirectory) throws -> (lines: [String], parent: String) {
        try SystemCallTrace.run(ChildProcess.productsDirectory + "/thumbcache", arguments, calls: "execve,clone,mmap,munmap,openat,seccomp", in: dir)
    }

    /// The parent's shared mappings of the store, in order: `PID mmap(…, MAP_SHARED, FD</…/data.mdb>, 0) = ADDRESS`.
    static func storeMappings(_ lines: [String], of parent: String) -> [(line: Int, address: String)] {
        lines.indices.filter { lines[$0].hasPrefix(parent + " ") && lines[$0].contains("MAP_SHARED") && lines[$0].contains(".mdb>") }
            .compactMap { i in lines[i].split(separator: "= ").last.map { (i, String($0).trimmingCharacters(in: .whitespaces)) } }
    }

    /// The same pixels as the documents program's, spawned by `thumbnail`.
    static func expectSamePixelsAsTheProgram(_ file: String, _ out: String, in dir: TemporaryDirectory) throws {
        let spawned = dir.appending("spawned.png")
        #expect(try Self.run(["thumbnail", file, "-o", spawned], cache: dir.appending("other")).0 == .exited(0))
        let (a, b) = (try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: out))), name: out),
                      try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: spawned))), name: spawned))
        #expect(a.width == b.width && a.height == b.height && a.pixels == b.pixels)
    }

    /// A PDF's worker is forked by a constructor, before the store is opened (no `exec` of the
    /// documents program, and no second fork: the call takes that worker); the child never holds a
    /// mapping of the store, loads poppler, and loads the system-call filter the parent built
    /// (libseccomp's probes are the parent's).
    @Test func aColdGetOfAPDFForksItsWorkerBeforeTheStoreIsOpened() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("report.pdf", Self.pdf)
        let out = dir.appending("forked.png")
        let (lines, parent) = try Self.traced(["get", file, "-o", out, "--no-daemon", "--cache", dir.appending("cache")], in: dir)
        #expect(!lines.contains { $0.contains("execve(") && $0.contains("thumbcache-worker-documents") }, "the documents program was started")
        let forks = SystemCallTrace.forks(in: lines, by: parent)
        #expect(forks.count == 1, "one worker, forked at start and taken: \(forks)")
        let mappings = Self.storeMappings(lines, of: parent)
        #expect(mappings.count == 2, "the store's map and lock table: \(mappings)")
        let (forkedAt, child) = try #require(forks.first)
        #expect(mappings.allSatisfy { $0.line > forkedAt }, "the worker was forked after the store was mapped")
        let childLines = lines.filter { $0.hasPrefix(child + " ") }
        #expect(childLines.contains { $0.contains("libpoppler") }, "the forked child did not load poppler")
        #expect(!childLines.contains { $0.contains(".mdb") }, "the child touched the store")
        let childFilters = childLines.filter { $0.contains("seccomp(") }
        #expect(childFilters.count == 1 && childFilters[0].contains("SECCOMP_SET_MODE_FILTER") && childFilters[0].contains("len="),
                "the child built its own filter: \(childFilters)")
        #expect(lines.contains { $0.hasPrefix(parent + " ") && $0.contains("SECCOMP_GET_ACTION_AVAIL") }, "the parent built no filter")
        try Self.expectSamePixelsAsTheProgram(file, out, in: dir)
    }

    /// A hit ends the worker forked at start at once (killed, not left loading poppler until its
    /// parent's exit), and forks nothing else.
    @Test func aHitEndsTheWorkerForkedAtStart() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("report.pdf", Self.pdf)
        let cache = dir.appending("cache")
        // A file changed within the stat cache's racy window is hashed again, which a quick hit does not do.
        RacyWindow.waitUntilSettled([file])
        #expect(try Self.run(["get", file, "-o", dir.appending("first.png")], cache: cache).0 == .exited(0))
        let (lines, parent) = try Self.traced(["get", file, "-o", dir.appending("hit.png"), "--no-daemon", "--cache", cache], in: dir)
        let forks = SystemCallTrace.forks(in: lines, by: parent)
        let child = try #require(forks.first?.child, "no worker was forked at start")
        #expect(forks.count == 1)
        #expect(lines.contains { $0.hasPrefix(child + " ") && $0.contains("killed by SIGKILL") }, "\(lines.filter { $0.hasPrefix(child + " ") }.suffix(3))")
    }

    /// Another document's worker (an OpenDocument's) is forked the usual way, once the store is
    /// open: the child unmaps each shared mapping the parent made of the store's files before it
    /// loads its filter.
    @Test func anotherDocumentsWorkerIsForkedLaterAndDropsTheStoresMappings() throws {
        let dir = TemporaryDirectory()
        let thumbnail = try dir.write("thumbnail.png", try ImageEncoder.png(TestPictures.source(width: 300, height: 400)))
        let file = dir.appending("report.odt")
        _ = try FixtureTools.run("/usr/bin/python3", ["-c", """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
                z.write(sys.argv[2], "Thumbnails/thumbnail.png", zipfile.ZIP_DEFLATED)
            """, file, thumbnail])
        let out = dir.appending("forked.png")
        let (lines, parent) = try Self.traced(["get", file, "-o", out, "--no-daemon", "--cache", dir.appending("cache")], in: dir)
        #expect(!lines.contains { $0.contains("execve(") && $0.contains("thumbcache-worker-documents") }, "the documents program was started")
        let forks = SystemCallTrace.forks(in: lines, by: parent)
        let mappings = Self.storeMappings(lines, of: parent)
        #expect(forks.count == 1 && mappings.count == 2, "\(forks) \(mappings)")
        let (forkedAt, child) = try #require(forks.first)
        #expect(mappings.allSatisfy { $0.line < forkedAt }, "the worker was forked before the store was mapped")
        let childLines = lines.filter { $0.hasPrefix(child + " ") }
        let filterAt = try #require(childLines.firstIndex { $0.contains("seccomp(") })
        for (_, address) in mappings {
            let unmapped = childLines.firstIndex { $0.contains("munmap(\(address),") }
            #expect(unmapped.map { $0 < filterAt } == true, "the child kept the parent's mapping at \(address)")
        }
        try Self.expectSamePixelsAsTheProgram(file, out, in: dir)
    }

    /// A cut PDF through the forked worker: the file and the reason, exit 1, nothing stored but
    /// the failure; the next file is served.
    @Test func aCutPDFSaysWhichFileAndWhy() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        let cut = try dir.write("cut.pdf", Array(Self.pdf.prefix(Self.pdf.count / 2)))
        let (end, stderr) = try Self.run(["get", cut, "--kind", "full", "-o", dir.appending("out.png")], cache: cache)
        #expect(end == .exited(1), "\(stderr)")
        #expect(stderr.contains(cut) && stderr.contains("poppler"), "\(stderr)")
        #expect(try ThumbnailStore.open(directory: cache).statistics().thumbnails == 0)
        let whole = try dir.write("whole.pdf", Self.pdf)
        #expect(try Self.run(["get", whole, "-o", dir.appending("whole.png")], cache: cache).0 == .exited(0))
        #expect(try ThumbnailStore.open(directory: cache).statistics().thumbnails == 1)
    }
}
