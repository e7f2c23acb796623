import Foundation
import Testing
import ThumbcacheSync
import ThumbcacheTestSupport
@testable import Thumbcache

/// The watcher's pairing of a move's two halves, on real inotify events of a real tree: a read
/// can fall between the halves, and a half that waits is not yet a move out of the trees.
@Suite struct DirectoryWatcherTests {
    /// Waits (up to 10 s) until the watcher's descriptor has events, then reads them raw. A
    /// signal (another test's child ending) interrupts `poll`, which is never restarted: it is
    /// called again, or the events were taken for none (a CI run failed so).
    private static func rawEvents(_ watcher: DirectoryWatcher) -> [UInt8] {
        var fds = [pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0)]
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        var ready = poll(&fds, 1, 10_000)
        while ready < 0 && errno == EINTR && MonotonicClock.nanoseconds() < deadline {
            ready = poll(&fds, 1, Int32((deadline - MonotonicClock.nanoseconds()) / 1_000_000))
        }
        guard ready == 1 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(watcher.descriptor, $0.baseAddress, $0.count) }
        return Array(buffer.prefix(max(0, n)))
    }

    /// The offset just past the first event whose mask has `bit`.
    private static func end(ofFirst bit: Int32, in events: [UInt8]) -> Int? {
        var offset = 0
        while offset + 16 <= events.count {
            let (mask, length) = events.withUnsafeBytes { ($0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                                                             Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))) }
            offset += 16 + length
            if mask & UInt32(bit) != 0 { return offset }
        }
        return nil
    }

    @Test func aDirectoryMoveReadInTwoPiecesIsStillAMove() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree/a/album/inner"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.appending("tree/b"), withIntermediateDirectories: true)
        _ = try dir.write("tree/a/album/p.png", [1])
        let watcher = try DirectoryWatcher()
        watcher.add(tree: dir.appending("tree"))
        try FileManager.default.moveItem(atPath: dir.appending("tree/a/album"), toPath: dir.appending("tree/b/album2"))
        var events = Self.rawEvents(watcher)
        if Self.end(ofFirst: IN_MOVED_TO, in: events) == nil { events += Self.rawEvents(watcher) }
        let cut = try #require(Self.end(ofFirst: IN_MOVED_FROM, in: events), "the move's first half")

        // A read that ends between the halves, and the batch taken at once: nothing yet.
        let t = MonotonicClock.nanoseconds()
        events.withUnsafeBytes { watcher.ingest(UnsafeRawBufferPointer(rebasing: $0[..<cut]), now: t) }
        #expect(watcher.take(now: t) == [])
        #expect(watcher.pairingDeadline == t + DirectoryWatcher.pairingGrace)

        // The second half in the next read, within the grace: one move, the watches following it.
        events.withUnsafeBytes { watcher.ingest(UnsafeRawBufferPointer(rebasing: $0[cut...]), now: t + 1_000_000) }
        #expect(watcher.take(now: t + 1_000_000) == [.moved(from: dir.appending("tree/a/album"), to: dir.appending("tree/b/album2"), isDirectory: true)])
        #expect(watcher.pairingDeadline == nil)
        let later = try dir.write("tree/b/album2/inner/later.png", [2])
        _ = Self.rawEvents(watcher).withUnsafeBytes { watcher.ingest($0) }
        #expect(watcher.take().contains(.file(later)))
    }

    /// A watched tree holding `tree/photo.png`, which is then moved out to `outside/`.
    private static func photoMovedOut(_ dir: TemporaryDirectory) throws -> (DirectoryWatcher, photo: String) {
        for folder in ["tree", "outside"] { try FileManager.default.createDirectory(atPath: dir.appending(folder), withIntermediateDirectories: true) }
        let photo = try dir.write("tree/photo.png", [1])
        let watcher = try DirectoryWatcher()
        watcher.add(tree: dir.appending("tree"))
        try FileManager.default.moveItem(atPath: photo, toPath: dir.appending("outside/photo.png"))
        return (watcher, photo)
    }

    @Test func aMoveOutIsARemovalOnceTheGraceHasPassed() throws {
        let dir = TemporaryDirectory()
        let (watcher, photo) = try Self.photoMovedOut(dir)
        let events = Self.rawEvents(watcher)
        #expect(Self.end(ofFirst: IN_MOVED_FROM, in: events) != nil)
        events.withUnsafeBytes { watcher.ingest($0, now: 1_000) }
        #expect(watcher.take(now: 1_000) == [])
        let due = try #require(watcher.pairingDeadline)
        #expect(watcher.take(now: due - 1) == [])
        #expect(watcher.take(now: due) == [.removed(photo, isDirectory: false)])
        #expect(watcher.pairingDeadline == nil)
    }

    /// Moved out, and another file put in its place while the move waited: removed, then there.
    @Test func aFilePutBackWhileItsMoveWaitedIsWhatIsThere() throws {
        let dir = TemporaryDirectory()
        let (watcher, photo) = try Self.photoMovedOut(dir)
        _ = try dir.write("tree/photo.png", [2])
        var events: [UInt8] = []
        while Self.end(ofFirst: IN_CLOSE_WRITE, in: events) == nil {
            let more = Self.rawEvents(watcher)
            try #require(!more.isEmpty, "the new file's events")
            events += more
        }
        events.withUnsafeBytes { watcher.ingest($0, now: 1_000) }
        #expect(watcher.take(now: 1_000) == [.file(photo)])
        #expect(watcher.take(now: 1_000 + DirectoryWatcher.pairingGrace) == [.removed(photo, isDirectory: false), .file(photo)])
    }
}
