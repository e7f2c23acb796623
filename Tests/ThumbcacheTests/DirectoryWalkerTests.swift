import Foundation
import Testing
import Thumbcache
import ThumbcacheStore
import ThumbcacheTestSupport

struct DirectoryWalkerTests {
    func walk(_ walker: DirectoryWalker, _ roots: [String]) -> (files: [String], failures: [FileError]) {
        var files: [String] = []
        var failures: [FileError] = []
        walker.walk(roots) { entry in
            switch entry {
            case .file(let path, let snapshot):
                files.append(path)
                // What the walk saw of a file is what a stat of its path says.
                if let snapshot { #expect(snapshot == (try? FileSnapshot.of(path: path)), "\(path)") }
            case .failure(let error): failures.append(error)
            }
        }
        return (files, failures)
    }

    @Test func findsNestedFilesAndSkipsTheCache() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("a/b/cache"), withIntermediateDirectories: true)
        try dir.write("top.png", [1])
        try dir.write("a/b/deep.jpg", [2])
        try dir.write("a/b/cache/data.mdb", [3])
        let (files, failures) = walk(DirectoryWalker(excluding: [dir.appending("a/b/cache")]), [dir.path])
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
        let (files, failures) = walk(DirectoryWalker(followSymbolicLinks: following), [dir.path])
        #expect(files.isEmpty)
        #expect(failures == [FileError(path: dir.appending("dangling.jpg"), reason: .danglingSymbolicLink)])
    }

    @Test func specialFilesAreNotYielded() throws {
        let dir = TemporaryDirectory()
        #expect(mkfifo(dir.appending("pipe"), 0o600) == 0)
        try dir.write("real.png", [1])
        #expect(walk(DirectoryWalker(), [dir.path]).files == [dir.appending("real.png")])
    }
}
