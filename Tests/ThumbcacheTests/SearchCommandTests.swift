import CThumbcacheFileInfo
import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport

/// End-to-end: `warm` feeds the index, `search` and `info` read it, in real processes.
@Suite(.serialized)
struct SearchCommandTests {
    func run(_ arguments: [String]) throws -> (status: ChildProcess.Termination, stdout: [String], stderr: String) {
        try ChildProcess.run("thumbcache", arguments)
    }

    @Test func warmIndexesAndSearchFinds() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        let cache = dir.appending("cache")
        try FileManager.default.createDirectory(atPath: tree + "/trip", withIntermediateDirectories: true)
        let beach = try dir.write("tree/trip/Beach Holiday.jpg", ImageEncoder.jpeg(testPhoto(width: 640, height: 480)))
        try dir.write("tree/trip/map.png", ImageEncoder.png(testPhoto(width: 300, height: 200)))
        let notes = try dir.write("tree/notes.txt", Array("not an image".utf8))
        let tagged = cfi_setxattr(notes, "user.xdg.tags", "work,Urgent", 11) == 0
        #expect(tagged || errno == ENOTSUP, "setxattr: \(String(cString: strerror(errno)))")
        let tagsWork = tagged

        #expect(try run(["warm", tree, "--cache", cache]).status == .exited(0))
        #expect(try run(["search", "holiday", "--cache", cache]).stdout == [beach])
        #expect(try run(["search", #"kMDItemFSName == "*.png""#, "--cache", cache]).stdout == [tree + "/trip/map.png"])
        #expect(try run(["search", #"kMDItemContentTypeTree == "public.image""#, "--count", "--cache", cache]).stdout == ["2"])
        #expect(try run(["search", "kMDItemPixelWidth == 640", "--attr", "kMDItemPixelHeight", "--cache", cache]).stdout
                == [beach + "\tkMDItemPixelHeight=480"])
        #expect(try run(["search", "kMDItemFSSize > 0", "--onlyin", tree + "/trip", "--count", "--cache", cache]).stdout == ["2"])
        if tagsWork {
            #expect(try run(["search", #"kMDItemUserTags == "urgent"c"#, "--cache", cache]).stdout == [notes])
        }

        let info = try run(["info", beach, "--cache", cache])
        #expect(info.status == .exited(0))
        #expect(info.stdout.contains { $0.hasPrefix("kMDItemPixelWidth") && $0.hasSuffix("= 640") })
        #expect(info.stdout.contains { $0.hasPrefix("kMDItemContentType ") && $0.hasSuffix("\"public.jpeg\"") })

        // A parse error: status 2, the message and a caret.
        let bad = try run(["search", "kMDItemFSSize >", "--cache", cache])
        #expect(bad.status == .exited(2))
        #expect(bad.stderr.contains("expected a value") && bad.stderr.contains("^"))

        // Rename and delete, then warm again: a move and a removal, not a delete plus an add.
        let moved = tree + "/trip/Beach Holiday 2.jpg"
        #expect(rename(beach, moved) == 0)
        try FileManager.default.removeItem(atPath: tree + "/trip/map.png")
        let second = try run(["warm", tree, "--cache", cache])
        #expect(second.stdout.contains { $0.contains("index: 0 added, 0 updated, 1 moved, 1 removed, 1 unchanged") }, "\(second.stdout)")
        #expect(try run(["search", "holiday", "--cache", cache]).stdout == [moved])
        #expect(try run(["search", #"kMDItemFSName == "*.png""#, "--cache", cache]).stdout == [])
        let gone = try run(["info", beach, "--cache", cache])
        #expect(gone.status == .exited(1))
        #expect(gone.stderr.contains("not in the index"))
    }

    /// An index written by an older thumbcache (Tests/ThumbcacheIndexTests/Fixtures/index-v2) is
    /// upgraded by the first command that opens it, which says so on standard error; the answer
    /// is the same as ever and the next command opens it without a word.
    @Test func anOlderIndexIsUpgradedWithANote() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        try IndexFixtures.copy(version: 2, into: cache + "/index")

        let first = try run(["search", "InRange(kMDItemFSSize, 4000000, 6000000)", "--cache", cache])
        #expect(first.status == .exited(0))
        #expect(first.stdout == ["/home/ana/Photos/2024/IMG_0001.jpg", "/home/ana/Photos/2024/IMG_0002.jpg"])
        #expect(first.stderr.contains("upgrading the search index") && first.stderr.contains("from format 2 to"), "\(first.stderr)")
        #expect(first.stderr.contains("search index upgraded in"))
        let second = try run(["search", "kMDItemFSSize >= 0", "--count", "--cache", cache])
        #expect(second.stdout == ["6"])
        #expect(!second.stderr.contains("upgrad"), "\(second.stderr)")
    }
}
