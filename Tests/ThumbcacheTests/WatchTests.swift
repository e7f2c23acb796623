import Foundation
import Testing
import ThumbcacheTestSupport
@testable import Thumbcache

/// `thumbcache watch` as a child process on a real tree, checked through the store and the
/// index it writes (opened here beside it, as another process would): creations, changes in
/// place and by rename over, moves in, within and out, deletions, bursts, an overflow of the
/// kernel's queue and the watch limit.
@Suite(.serialized)
struct WatchTests {
    final class Watch {
        let dir: TemporaryDirectory
        let child: ChildProcess
        let store: ThumbnailStore
        let index: MetadataIndex

        init(_ dir: TemporaryDirectory, extra: [String] = [], beforeStart: () throws -> Void = {}, afterStart: () throws -> Void = {}) throws {
            self.dir = dir
            try beforeStart()
            child = try ChildProcess(program: "thumbcache", arguments: ["watch", dir.appending("tree"), "--cache", dir.appending("cache"), "--json",
                                                                        "--jobs", "2"] + extra)
            // The first line is the initial warm: from then on every event is seen.
            #expect(child.waitForLines(1, timeout: 60).count == 1, "watch started")
            try afterStart()
            store = try ThumbnailStore.open(directory: dir.appending("cache"))
            index = try MetadataIndex.open(directory: dir.appending("cache/index"))
        }

        deinit {
            child.kill(SIGTERM)
            _ = child.wait(timeout: 20)
        }

        /// Waits (up to 20 s) until `condition` holds; false if it never does.
        func eventually(_ condition: () -> Bool) -> Bool {
            for _ in 0..<400 {
                if condition() { return true }
                usleep(50_000)
            }
            return condition()
        }

        func indexed(_ path: String) -> SearchResult? { (try? index.item(path: path)) ?? nil }

        /// Indexed with the file's current size, and its thumbnail in the store.
        func current(_ path: String) -> Bool {
            guard let item = indexed(path), let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int,
                case .number(let indexedSize)? = item.attributes[MDItem.fsSize], Int(indexedSize) == size,
                let entry = try? store.fileEntry(path: path),
                let thumbnails = try? store.thumbnails(of: entry.content)
            else { return false }
            return !thumbnails.isEmpty
        }
    }

    static func png(_ seed: Int, width: Int = 40) throws -> [UInt8] {
        let pixel: [UInt8] = [UInt8(seed % 256), UInt8(seed / 256 % 256), 77, 255]
        return try ImageEncoder.png(RGBAImage(width: width, height: 30, pixels: [[UInt8]](repeating: pixel, count: width * 30).flatMap { $0 },
                                              hasAlpha: false))
    }

    @Test func createsChangesMovesAndDeletesAreFollowed() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree/sub"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.appending("outside"), withIntermediateDirectories: true)
        let kept = try dir.write("tree/kept.png", Self.png(1))
        let watch = try Watch(dir)
        #expect(watch.current(kept))

        // Created.
        let created = try dir.write("tree/sub/new.png", Self.png(2))
        #expect(watch.eventually { watch.current(created) })

        // Changed in place (a larger picture: another size).
        try Data(Self.png(3, width: 80)).write(to: URL(fileURLWithPath: created))
        #expect(watch.eventually { watch.current(created) })

        // Changed by a rename over it, as editors save.
        let temporary = try dir.write("tree/sub/.new.png.tmp", Self.png(4, width: 120))
        #expect(rename(temporary, created) == 0)
        #expect(watch.eventually { watch.current(created) })

        // Moved within: the same index item, at its new path.
        let number = try #require(watch.indexed(kept)).itemNumber
        let moved = dir.appending("tree/sub/kept-moved.png")
        try FileManager.default.moveItem(atPath: kept, toPath: moved)
        #expect(watch.eventually { watch.indexed(moved)?.itemNumber == number && watch.indexed(kept) == nil })
        #expect((try? watch.store.fileEntry(path: moved)) != nil)

        // Moved out, and deleted: gone from the index.
        try FileManager.default.moveItem(atPath: moved, toPath: dir.appending("outside/kept.png"))
        try FileManager.default.removeItem(atPath: created)
        #expect(watch.eventually { watch.indexed(moved) == nil && watch.indexed(created) == nil })

        // A directory moved in with files inside.
        try FileManager.default.createDirectory(atPath: dir.appending("outside/album/inner"), withIntermediateDirectories: true)
        let album = try (0..<5).map { try dir.write("outside/album/\($0 < 3 ? "" : "inner/")p\($0).png", Self.png(10 + $0)) }
        try FileManager.default.moveItem(atPath: dir.appending("outside/album"), toPath: dir.appending("tree/album"))
        let arrived = album.map { $0.replacingOccurrences(of: "/outside/", with: "/tree/") }
        #expect(watch.eventually { arrived.allSatisfy(watch.current) })

        // A directory moved within: its files keep their items; and new files in it are seen (its watch followed).
        let numbers = arrived.compactMap { watch.indexed($0)?.itemNumber }
        try FileManager.default.moveItem(atPath: dir.appending("tree/album"), toPath: dir.appending("tree/sub/album2"))
        let renamed = arrived.map { $0.replacingOccurrences(of: "/tree/album/", with: "/tree/sub/album2/") }
        // A failure says what the watch's last batches were (a move taken for a removal and a new directory?).
        #expect(watch.eventually { renamed.compactMap { watch.indexed($0)?.itemNumber } == numbers }, "\(watch.child.output.suffix(3))")
        let later = try dir.write("tree/sub/album2/inner/later.png", Self.png(99))
        #expect(watch.eventually { watch.current(later) })
    }

    /// An item a warm in flight wrote at a path its directory was just renamed away from (as the
    /// soak found, a moved directory's file left at its old path): the move's batch drops it.
    @Test func aMovedDirectoryLeavesNothingIndexedAtItsOldPlace() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree/a"), withIntermediateDirectories: true)
        let photo = try dir.write("tree/a/photo.png", Self.png(5))
        let watch = try Watch(dir)
        #expect(watch.current(photo))
        // What the warm in flight would have written: an item for a path that is not there.
        let phantom = dir.appending("tree/a/phantom.png")
        _ = try watch.index.indexFiles([FileItem(path: phantom, state: IndexedFileState(size: 9, modificationTime: 1, changeTime: 1, inode: 1, device: 1),
                                                 contentHash: Array(repeating: 7, count: 16), attributes: [:])])
        #expect(watch.indexed(phantom) != nil)
        try FileManager.default.moveItem(atPath: dir.appending("tree/a"), toPath: dir.appending("tree/b"))
        #expect(watch.eventually { watch.indexed(dir.appending("tree/b/photo.png")) != nil && watch.indexed(phantom) == nil },
                "\(String(describing: watch.indexed(phantom)))")
    }

    /// The decoder workers a change started end after a quiet spell (`--worker-idle-exit`), and
    /// the next change starts them again: a watcher waiting for hours holds no decoder processes.
    @Test func idleWorkersExitAndComeBack() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        // Workers are counted while the change is awaited, and the quiet spell is long enough that a
        // test process stalled by a loaded machine still sees one alive.
        let watch = try Watch(dir, extra: ["--worker-idle-exit", "4"])
        func workers() -> Int {
            let parent = watch.child.processIdentifier
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.filter { entry in
                guard Int32(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return false }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 1 && Int32(fields[1]) == parent && stat.contains("(thumbcache-work")
            }.count
        }
        let first = try dir.write("tree/first.png", Self.png(1))
        var seen = 0
        #expect(watch.eventually { seen = max(seen, workers()); return watch.current(first) })
        #expect(seen >= 1, "a worker decoded the change")
        #expect(watch.eventually { workers() == 0 }, "idle workers exited")
        let second = try dir.write("tree/second.png", Self.png(2))
        #expect(watch.eventually { watch.current(second) })
    }

    /// A changed file's words are read again and its old ones stop matching; watch and its
    /// workers run at idle CPU and I/O priority.
    @Test func theWordsOfChangedFilesFollowAtIdlePriority() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        let watch = try Watch(dir)
        func found(_ word: String) -> [String] {
            ((try? watch.index.search(word))?.results ?? []).compactMap(\.path)
        }
        let notes = try dir.write("tree/notes.txt", Array("buy elderberries tomorrow".utf8))
        #expect(watch.eventually { found("elderberries") == [notes] })
        try Data("buy gooseberries instead".utf8).write(to: URL(fileURLWithPath: notes))
        #expect(watch.eventually { found("gooseberries") == [notes] })
        #expect(found("elderberries").isEmpty)

        let pid = watch.child.processIdentifier
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        #expect(fields.count > 16 && fields[16] == "19", "nice 19: \(fields.count > 16 ? String(fields[16]) : stat)")
        let ionice = try ChildProcess(program: "/usr/bin/ionice", arguments: ["-p", "\(pid)"])
        _ = ionice.wait()
        #expect(ionice.output.first == "idle", "\(ionice.output)")
    }

    @Test func aThousandFilesAtOnce() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        let watch = try Watch(dir)
        let files = try (0..<1000).map { try dir.write("tree/f\($0).png", Self.png($0)) }
        #expect(watch.eventually { files.allSatisfy { watch.indexed($0) != nil } })
        #expect(files.allSatisfy(watch.current))
    }

    /// With the kernel's queue made tiny for this watcher's inotify instance (the limit is read
    /// when the instance is made), a burst overflows it; the rescan that follows misses nothing.
    @Test func nothingIsMissedAfterAnOverflow() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        let limit = "/proc/sys/fs/inotify/max_queued_events"
        let original = try String(contentsOfFile: limit, encoding: .utf8)
        defer { try? original.write(toFile: limit, atomically: false, encoding: .utf8) }
        let watch = try Watch(dir, extra: ["--quiet", "0.05"], beforeStart: { try "8".write(toFile: limit, atomically: false, encoding: .utf8) },
                              afterStart: { try original.write(toFile: limit, atomically: false, encoding: .utf8) })
        // A first burst of large pictures keeps the watcher busy warming (0.05 s of quiet ends
        // its batch); the second burst comes meanwhile and overflows the 8-event queue.
        let large = try (0..<40).map { try dir.write("tree/large\($0).png", Self.png($0, width: 1500)) }
        #expect(watch.eventually { large.contains { (try? watch.store.fileEntry(path: $0)) ?? nil != nil } }, "the first burst is being warmed")
        let files = large + (try (0..<300).map { try dir.write("tree/f\($0).png", Self.png($0)) })
        #expect(watch.eventually { files.allSatisfy { watch.indexed($0) != nil } })
        #expect(watch.eventually { watch.child.output.dropFirst().contains { $0.contains("\"rescanned\":true") } },
                "an overflow was seen and answered: \(watch.child.output.suffix(3))")
    }

    @Test func pastTheWatchLimitDirectoriesAreRescannedAndTheUserIsTold() throws {
        let dir = TemporaryDirectory()
        for sub in ["a", "b", "c"] { try FileManager.default.createDirectory(atPath: dir.appending("tree/\(sub)"), withIntermediateDirectories: true) }
        let watch = try Watch(dir, extra: ["--max-watches", "2", "--rescan-interval", "1"])
        let files = try ["a", "b", "c"].map { try dir.write("tree/\($0)/new.png", Self.png($0.utf8.first.map(Int.init) ?? 0)) }
        #expect(watch.eventually { files.allSatisfy { watch.indexed($0) != nil } }, "the unwatched one is found by the rescan")
        let lines = watch.child.waitForLines(1)
        #expect(lines.first?.contains("watching 2 directories at most") == true, "\(lines.first ?? "")")
    }
}
