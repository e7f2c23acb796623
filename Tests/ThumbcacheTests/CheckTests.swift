import Foundation
import Testing
@testable import Thumbcache
import ThumbcacheImaging
import ThumbcacheLMDB
import ThumbcacheTestSupport
@testable import ThumbcacheIndex
@testable import ThumbcacheStore

/// `thumbcache check` on a real cache warmed by the real CLI: clean, then with records broken
/// the ways a crash, a bad disk or a bug would leave them (written straight into the LMDB files),
/// each reported with what it affects and exit status 1; `--repair` removes exactly those and
/// leaves the rest working.
struct CheckTests {
    /// `thumbcache check` of `cache` and of the standard thumbnails in `cache`'s sibling `thumbnails`
    /// (never the user's own).
    static func check(_ cache: String, _ extra: [String] = []) throws -> (status: ChildProcess.Termination, json: [String: Any]) {
        let standard = (cache as NSString).deletingLastPathComponent + "/thumbnails"
        let run = try ChildProcess.run("thumbcache", ["check", "--cache", cache, "--json", "--freedesktop-dir", standard] + extra)
        let json = (try? JSONSerialization.jsonObject(with: Data(run.stdout.joined(separator: "\n").utf8))) as? [String: Any] ?? [:]
        return (run.status, json)
    }

    static func problems(_ json: [String: Any]) -> [String] {
        (["store", "index", "freedesktop"] as [String]).flatMap { part in
            ((json[part] as? [String: Any])?["findings"] as? [[String: Any]] ?? []).map { "\($0["database"] ?? "?"): \($0["problem"] ?? "?")" }
        }
    }

    @Test func aCleanCacheChecksCleanAndBrokenRecordsAreFoundAndRepaired() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        for i in 0..<4 { try dir.write("tree/photo\(i).png", ImageEncoder.png(testPhoto(width: 60 + i, height: 40))) }
        try dir.write("tree/notes.txt", Array("a note about elderberries\n".utf8))
        let cache = dir.appending("cache")
        try #require(try ChildProcess.run("thumbcache", ["warm", tree, "--cache", cache]).status == .exited(0))

        let clean = try Self.check(cache)
        #expect(clean.status == .exited(0) && clean.json["violations"] as? Int == 0, "\(clean.json)")
        #expect(((clean.json["store"] as? [String: Any])?["checked"] as? [String: Int])?["thumbnails"] == 5, "four photos and the note's page")

        // Broken the ways a crash or a bug would leave them.
        let store = try ThumbnailStore.open(directory: cache)
        let photo = tree + "/photo0.png"
        let entry = try #require(try store.fileEntry(path: photo))
        let stored = try #require(try store.thumbnails(of: entry.content).first)
        // A thumbnail whose bytes are not the PNG its header says.
        try store.apply([.thumbnail(stored.key, stored.header, data: [1, 2, 3, 4])])
        // An access stamp of a thumbnail that is not stored.
        let ghost = ThumbnailKey(content: ContentHash(high: 1, low: 2), boxWidth: 256, boxHeight: 256, variant: stored.key.variant)
        try store.apply([.accessed(ghost, minute: 1)])
        let index = try MetadataIndex.open(directory: cache + "/index")
        let gone = tree + "/photo1.png"
        try index.environment.write { txn in
            // An item removed without its key and its lists (as a bug would).
            let number = try #require(try txn.get(index.ids, key: MetadataIndex.idKey(.file, gone)).flatMap(MetadataIndex.itemNumber))
            _ = try txn.delete(index.items, key: MetadataIndex.itemNumberBytes(number))
            // A key naming an item that was never stored.
            try txn.put(index.ids, key: MetadataIndex.idKey(.file, tree + "/never.png"), value: MetadataIndex.itemNumberBytes(7777))
        }

        let broken = try Self.check(cache)
        let found = Self.problems(broken.json)
        #expect(broken.status == .exited(1), "\(broken.json)")
        #expect(found.contains("thumbnails: the PNG it says does not start as one"), "\(found)")
        #expect(found.contains("access: a stamp of a thumbnail not stored"), "\(found)")
        #expect(found.contains { $0.hasPrefix("postings: lists item") }, "\(found)")
        #expect(found.filter { $0 == "ids: names an item not stored" }.count == 2, "\(found)")
        #expect(found.contains("hashes: names an item not stored"), "\(found)")

        let repaired = try Self.check(cache, ["--repair"])
        #expect(repaired.status == .exited(0) && repaired.json["violations"] as? Int == 0, "\(repaired.json)")
        #expect((repaired.json["repaired"] as? Int ?? 0) >= 6, "\(repaired.json)")
        #expect(try Self.check(cache).status == .exited(0))
        // Only what was broken went: the other photos keep their thumbnails and their items.
        for i in 2..<4 {
            let path = tree + "/photo\(i).png"
            #expect(try store.fileEntry(path: path).map { try store.thumbnails(of: $0.content).count } == 1)
        }
        #expect(try store.thumbnail(stored.key) == nil, "the broken thumbnail is made again when asked")
        let names = try ChildProcess.run("thumbcache", ["search", "kMDItemFSName == \"photo*\"", "--cache", cache]).stdout.filter { !$0.isEmpty }
        #expect(Set(names) == Set([0, 2, 3].map { tree + "/photo\($0).png" }), "\(names)")
        #expect(try ChildProcess.run("thumbcache", ["search", "elderberries", "--cache", cache]).stdout.first == tree + "/notes.txt")
        // The next warm puts back what the repair removed.
        try #require(try ChildProcess.run("thumbcache", ["warm", tree, "--cache", cache]).status == .exited(0))
        #expect(try store.thumbnail(stored.key) != nil)
        #expect(try Self.check(cache).status == .exited(0))
    }

    /// The standard thumbnails thumbcache wrote: a cut one, a misnamed one and a dead writer's
    /// temporary file are violations a repair removes; a stale one is garbage; another program's
    /// broken one is not thumbcache's to judge.
    @Test func standardThumbnailsThumbcacheWroteAreChecked() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        for i in 0..<4 { try dir.write("tree/photo\(i).png", ImageEncoder.png(testPhoto(width: 300 + i, height: 200))) }
        let (cache, standard) = (dir.appending("cache"), dir.appending("thumbnails"))
        try #require(try ChildProcess.run("thumbcache", ["warm", tree, "--cache", cache, "--freedesktop", "--freedesktop-dir", standard]).status
            == .exited(0))
        let clean = try Self.check(cache)
        #expect(clean.status == .exited(0), "\(clean.json)")
        let checked = ((clean.json["freedesktop"] as? [String: Any])?["checked"] as? [String: Int]) ?? [:]
        #expect(checked["normal"] == 4 && checked["large"] == 4, "\(clean.json)")

        func thumbnail(_ i: Int, _ size: String = "large") -> String {
            standard + "/" + size + "/" + MD5.hex(Array(FileURI.of(path: tree + "/photo\(i).png").utf8)) + ".png"
        }
        let cut = try #require(FileManager.default.contents(atPath: thumbnail(0)))
        try cut.prefix(cut.count - 20).write(to: URL(fileURLWithPath: thumbnail(0)))
        let misnamed = standard + "/large/" + String(repeating: "0", count: 32) + ".png"
        try FileManager.default.moveItem(atPath: thumbnail(1), toPath: misnamed)
        let temporary = standard + "/normal/.thumbcache-\(try Self.deadProcess())-12345.png"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: temporary))
        try dir.write("tree/photo2.png", ImageEncoder.png(testPhoto(width: 90, height: 90)))  // its thumbnails now stale
        var theirs = try ImageEncoder.png(testPhoto(width: 64, height: 64), text: [("Thumb::URI", "file:///elsewhere.png"), ("Thumb::MTime", "1"),
                                                                                   ("Software", "GNOME::ThumbnailFactory")])
        theirs.removeLast(10)
        let other = standard + "/normal/" + MD5.hex(Array("file:///elsewhere.png".utf8)) + ".png"
        try Data(theirs).write(to: URL(fileURLWithPath: other))

        let broken = try Self.check(cache)
        let found = Self.problems(broken.json)
        #expect(broken.status == .exited(1), "\(broken.json)")
        #expect(found.contains { $0.hasPrefix("large: not a whole PNG") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("large: named for another URI") }, "\(found)")
        #expect(found.contains { $0.hasPrefix("normal: a temporary file of writer") }, "\(found)")
        #expect(found.count == 3, "\(found)")
        #expect(((broken.json["freedesktop"] as? [String: Any])?["garbage"] as? [String: Int])?["stale freedesktop thumbnails"] == 2)

        let repaired = try Self.check(cache, ["--repair"])
        #expect(repaired.status == .exited(0) && repaired.json["repaired"] as? Int == 3, "\(repaired.json)")
        for gone in [thumbnail(0), misnamed, temporary] { #expect(!FileManager.default.fileExists(atPath: gone), "\(gone)") }
        for kept in [thumbnail(2), thumbnail(3), thumbnail(0, "normal"), other] { #expect(FileManager.default.fileExists(atPath: kept), "\(kept)") }
    }

    /// The id of a process that has ended (a child started and waited for).
    static func deadProcess() throws -> pid_t {
        let child = try ChildProcess(program: "/bin/true", arguments: [])
        _ = child.wait()
        return child.processIdentifier
    }

    @Test func aMissingCacheIsAnErrorNotANewCache() throws {
        let dir = TemporaryDirectory()
        let run = try ChildProcess.run("thumbcache", ["check", "--cache", dir.appending("nothing")])
        #expect(run.status == .exited(1) && run.stderr.contains("no cache at"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appending("nothing")))
    }
}
