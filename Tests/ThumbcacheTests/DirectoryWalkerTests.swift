import Foundation
import Synchronization
import Testing
import Thumbcache
import ThumbcacheStore
import ThumbcacheSync
import ThumbcacheTestSupport

struct DirectoryWalkerTests {
    func walk(_ walker: DirectoryWalker, _ roots: [String]) -> (files: [String], failures: [FileError], special: [String]) {
        var files: [String] = []
        var failures: [FileError] = []
        var special: [String] = []
        walker.walk(roots) { entry in
            switch entry {
            case .file(let path, let snapshot):
                files.append(path)
                // What the walk saw of a file is what a stat of its path says.
                if let snapshot { #expect(snapshot == (try? FileSnapshot.of(path: path)), "\(path)") }
            case .special(let path): special.append(path)
            case .failure(let error): failures.append(error)
            }
        }
        return (files, failures, special)
    }

    @Test func findsNestedFilesAndSkipsTheCache() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("a/b/cache"), withIntermediateDirectories: true)
        try dir.write("top.png", [1])
        try dir.write("a/b/deep.jpg", [2])
        try dir.write("a/b/cache/data.mdb", [3])
        let (files, failures, _) = walk(DirectoryWalker(excluding: [dir.appending("a/b/cache")]), [dir.path])
        #expect(Set(files) == [dir.appending("top.png"), dir.appending("a/b/deep.jpg")])
        #expect(failures.isEmpty)
    }

    @Test func symlinkLoopsEndWhenFollowing() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("a"), withIntermediateDirectories: true)
        try dir.write("a/x.png", [1])
        #expect(symlink(dir.path, dir.appending("a/loop")) == 0)
        #expect(symlink(dir.appending("a/x.png"), dir.appending("link.png")) == 0)
        let following = walk(DirectoryWalker(followSymbolicLinks: true), [dir.path])
        #expect(following.files.sorted() == [dir.appending("a/x.png"), dir.appending("link.png")])
        let notFollowing = walk(DirectoryWalker(), [dir.path])
        #expect(notFollowing.files == [dir.appending("a/x.png")])
    }

    @Test(arguments: [true, false])
    func danglingLinksAreReported(following: Bool) throws {
        let dir = TemporaryDirectory()
        #expect(symlink(dir.appending("gone"), dir.appending("dangling.jpg")) == 0)
        let (files, failures, _) = walk(DirectoryWalker(followSymbolicLinks: following), [dir.path])
        #expect(files.isEmpty)
        #expect(failures == [FileError(path: dir.appending("dangling.jpg"), reason: .danglingSymbolicLink)])
    }

    /// A FIFO or a socket is reported as one, in a directory or as a root, followed through a link
    /// or not, and never yielded as a file (opening a FIFO to read it would wait for a writer).
    @Test(arguments: [true, false])
    func specialFilesAreReportedNotYielded(following: Bool) throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        #expect(mkfifo(dir.appending("tree/pipe"), 0o600) == 0)
        let socket = boundSocket(at: dir.appending("tree/socket"))
        defer { close(socket) }
        #expect(mkfifo(dir.appending("root-pipe"), 0o600) == 0)
        #expect(symlink(dir.appending("root-pipe"), dir.appending("tree/link-to-pipe")) == 0)
        try dir.write("tree/real.png", [1])
        let walker = DirectoryWalker(followSymbolicLinks: following)
        let result = walk(walker, [dir.appending("tree"), dir.appending("root-pipe")])
        #expect(result.files == [dir.appending("tree/real.png")])
        #expect(result.failures.isEmpty)
        let expected = [dir.appending("tree/pipe"), dir.appending("tree/socket"), dir.appending("root-pipe")]
            + (following ? [dir.appending("tree/link-to-pipe")] : [])
        #expect(Set(result.special) == Set(expected) && result.special.count == expected.count)
        let parallel = walkInParallel(walker, [dir.appending("tree"), dir.appending("root-pipe")], threads: 2, run: 4).joined()
        #expect(Set(parallel.compactMap { if case .special(let path) = $0 { path } else { nil } }) == Set(expected))
    }

    /// A Unix socket bound at `path` (the file a socket leaves in the tree).
    func boundSocket(at path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = UnixSocket.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(fd >= 0 && bound == 0, "cannot bind \(path)")
        return fd
    }

    /// The parallel walk, its runs in the order they came.
    func walkInParallel(_ walker: DirectoryWalker, _ roots: [String], threads: Int, run: Int) -> [[DirectoryWalker.Entry]] {
        let runs = Mutex<[[DirectoryWalker.Entry]]>([])
        walker.walk(roots, threads: threads, run: run) { entries in runs.withLock { $0.append(entries) } }
        return runs.withLock { $0 }
    }

    @Test(arguments: [1, 2, 4])
    func aParallelWalkFindsWhatTheWalkFinds(threads: Int) throws {
        let dir = TemporaryDirectory()
        for i in 0..<6 {
            for j in 0..<5 {
                try FileManager.default.createDirectory(atPath: dir.appending("d\(i)/e\(j)"), withIntermediateDirectories: true)
                for k in 0..<(i * 7 + j) { try dir.write("d\(i)/e\(j)/f\(k)", [UInt8(k)]) }
            }
            try dir.write("d\(i)/top", [1])
        }
        try FileManager.default.createDirectory(atPath: dir.appending("d2/e1/cache"), withIntermediateDirectories: true)
        try dir.write("d2/e1/cache/data.mdb", [3])
        // Two ways into one directory, and a loop: followed, each file still comes once.
        #expect(symlink(dir.appending("d3"), dir.appending("d1/again")) == 0)
        #expect(symlink(dir.appending("d3"), dir.appending("d4/again")) == 0)
        #expect(symlink(dir.path, dir.appending("d5/loop")) == 0)
        #expect(symlink(dir.appending("gone"), dir.appending("d0/dangling")) == 0)
        let other = TemporaryDirectory()
        try other.write("alone.png", [1])
        let roots = [dir.path, other.appending("alone.png")]
        for follow in [false, true] {
            let walker = DirectoryWalker(followSymbolicLinks: follow, excluding: [dir.appending("d2/e1/cache")])
            let expected = walk(walker, roots)
            let runs = walkInParallel(walker, roots, threads: threads, run: 8)
            var files: [String] = []
            var failures: [FileError] = []
            for entry in runs.joined() {
                switch entry {
                case .file(let path, let snapshot):
                    files.append(path)
                    if let snapshot { #expect(snapshot == (try? FileSnapshot.of(path: path)), "\(path)") }
                case .special(let path): Issue.record("\(path) is not special")
                case .failure(let error): failures.append(error)
                }
            }
            #expect(files.sorted() == expected.files.sorted())
            #expect(Set(files).count == files.count, "a file came twice")
            #expect(failures == expected.failures)
            #expect(runs.allSatisfy { $0.count <= 8 })
            #expect(files.count > 300)
        }
    }

    @Test func aParallelWalksRunsStartSmall() throws {
        let dir = TemporaryDirectory()
        for k in 0..<100 { try dir.write("f\(k)", [1]) }
        let runs = walkInParallel(DirectoryWalker(), [dir.path], threads: 1, run: 16)
        #expect(runs.map(\.count) == [1, 2, 4, 8, 16, 16, 16, 16, 16, 5])
    }

    @Test func aParallelWalkStartsWithTheLargestRootFiles() throws {
        let dir = TemporaryDirectory()
        let sizes = [3, 50, 1, 900, 20, 7, 400]
        for (i, size) in sizes.enumerated() { try dir.write("f\(i)", [UInt8](repeating: 1, count: size)) }
        try FileManager.default.createDirectory(atPath: dir.appending("sub"), withIntermediateDirectories: true)
        try dir.write("sub/inner", [1])
        let roots = sizes.indices.map { dir.appending("f\($0)") } + [dir.appending("sub")]
        let runs = walkInParallel(DirectoryWalker(), roots, threads: 2, run: 4)
        // A long file first keeps every worker busy to the end instead of one finishing it alone.
        #expect(runs.prefix(3).map(\.count) == [1, 2, 4])
        let sizesSeen = runs.prefix(3).joined().map { entry -> UInt64? in
            if case .file(_, let snapshot) = entry { snapshot?.size } else { nil }
        }
        #expect(sizesSeen == [900, 400, 50, 20, 7, 3, 1])
        #expect(runs.count == 4)
    }
}

