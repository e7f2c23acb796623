import Foundation
import Testing
import ThumbcacheTestSupport
@testable import Thumbcache

/// A one-file `thumbcache get` of a document forks its documents worker from `thumbcache`
/// instead of starting `thumbcache-worker-documents` (Docs/SECURITY.md): the same pixels and
/// the same errors as a spawned worker's, and a child that keeps none of the parent's shared
/// memory (the store's LMDB map and lock table) nor its open files.
@Suite(.serialized)
struct ForkedDocumentsWorkerTests {
    static let pdf = PDFFixture.document(pages: 1, width: 612, height: 792, cropBox: nil, title: "Report", author: "A",
                                         text: "Hello thumbcache", pageTexts: nil)

    static func run(_ arguments: [String], cache: String) throws -> (ChildProcess.Termination, String) {
        let child = try ChildProcess(program: "thumbcache", arguments: arguments,
                                     environment: ProcessInfo.processInfo.environment.merging(["THUMBCACHE_DIR": cache]) { $1 })
        return child.wait(timeout: 60)
    }

    /// strace shows the fork (no `exec` of the documents program), that the child unmaps each
    /// shared mapping the parent made of the store's files before it loads poppler, and that it
    /// loads the system-call filter the parent built (libseccomp's probes are the parent's).
    @Test func aColdGetForksTheWorkerWhichDropsTheStoresMappings() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("report.pdf", Self.pdf)
        let log = dir.appending("strace.log")
        let out = dir.appending("forked.png")
        _ = try FixtureTools.run("strace", ["-f", "-qq", "-y", "-e", "trace=execve,mmap,munmap,openat,seccomp", "-o", log,
                                            ChildProcess.productsDirectory + "/thumbcache", "get", file, "-o", out, "--no-daemon",
                                            "--cache", dir.appending("cache")])
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(!lines.contains { $0.contains("execve(") && $0.contains("thumbcache-worker-documents") }, "the documents program was started")
        // The parent's shared mappings of the store: `PID mmap(NULL, LENGTH, ..., MAP_SHARED, FD</…/data.mdb>, 0) = ADDRESS`.
        let parent = try #require(lines.first { $0.contains("execve(") }?.split(separator: " ").first.map(String.init))
        let shared = lines.filter { $0.hasPrefix(parent + " ") && $0.contains("MAP_SHARED") && $0.contains(".mdb>") }
            .compactMap { $0.split(separator: "= ").last.map { String($0).trimmingCharacters(in: .whitespaces) } }
        #expect(shared.count == 2, "the store's map and lock table: \(shared)")
        // The child: the process that opens poppler.
        let child = try #require(lines.first { $0.contains("libpoppler") && !$0.hasPrefix(parent + " ") }?.split(separator: " ").first.map(String.init))
        let childLines = lines.filter { $0.hasPrefix(child + " ") }
        let popplerAt = try #require(childLines.firstIndex { $0.contains("libpoppler") })
        for address in shared {
            let unmapped = childLines.firstIndex { $0.contains("munmap(\(address),") }
            #expect(unmapped.map { $0 < popplerAt } == true, "the child kept the parent's mapping at \(address)")
        }
        let childFilters = childLines.filter { $0.contains("seccomp(") }
        #expect(childFilters.count == 1 && childFilters[0].contains("SECCOMP_SET_MODE_FILTER") && childFilters[0].contains("len="),
                "the child built its own filter: \(childFilters)")
        #expect(lines.contains { $0.hasPrefix(parent + " ") && $0.contains("SECCOMP_GET_ACTION_AVAIL") }, "the parent built no filter")
        // The same pixels as the documents program's, spawned by `thumbnail`.
        let spawned = dir.appending("spawned.png")
        #expect(try Self.run(["thumbnail", file, "-o", spawned], cache: dir.appending("other")).0 == .exited(0))
        let (a, b) = (try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: out))), name: out),
                      try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: spawned))), name: spawned))
        #expect(a.width == b.width && a.height == b.height && a.pixels == b.pixels)
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
