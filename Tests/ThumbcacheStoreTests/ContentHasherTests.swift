import CThumbcacheXXHash
import Foundation
import Testing
import ThumbcacheStore
import ThumbcacheTestSupport

struct ContentHasherTests {
    // Expected values printed by `xxhsum -H2` (XXH3-128) for the same bytes.
    @Test(arguments: [
        ("", "99aa06d3014798d86001c324468d497f"),
        ("thumbcache", "53d4307bab6e0b21430cd4b8d3701cd4"),
    ])
    func matchesXXHSumInMemory(input: String, expected: String) {
        #expect(ContentHash.of(Array(input.utf8)).hex == expected)
    }

    /// 1,000,000 × "a" through buffers of several sizes, so reads split the data differently.
    @Test(arguments: [4096, 65_537, ContentHasher.defaultBufferSize])
    func matchesXXHSumStreamingAFile(bufferSize: Int) throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("a.bin", [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        let (hash, snapshot) = try ContentHasher(bufferSize: bufferSize).hash(fileAt: path)
        #expect(hash.hex == "a545df8e384a9579b1fd6fae5285c4eb")
        #expect(snapshot.size == 1_000_000)
        #expect(ContentHash(hex: hash.hex) == hash)
    }

    /// Mapped and read hashing agree on files around the mapping threshold and window.
    @Test(arguments: [300_000, (64 << 20) + 12_345])
    func mappedAndReadHashesAgree(size: Int) throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("f", (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 ^ $0 >> 9) })
        let mapped = try ContentHasher(keying: .full).hash(fileAt: path).hash
        let read = try ContentHasher(mapThreshold: .max, keying: .full).hash(fileAt: path).hash
        #expect(mapped == read)
        #expect(read == ContentHash.of(try Array(Data(contentsOf: URL(fileURLWithPath: path)))))
    }

    /// Above the threshold a file is keyed by its size, its ends and 64 pieces: a change there
    /// changes the key, a change between pieces does not (the trade Docs/FORMAT.md describes),
    /// and the key is never the full hash of the same bytes.
    @Test func largeFilesAreKeyedBySamples() throws {
        let dir = TemporaryDirectory()
        let size = 80 << 20
        var bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 ^ $0 >> 11) }
        let path = try dir.write("big.bin", bytes)
        let sampled = try ContentHasher().hash(fileAt: path).hash
        let full = try ContentHasher(keying: .full).hash(fileAt: path).hash
        #expect(full == ContentHash.of(bytes))
        #expect(sampled != full)
        #expect(try ContentHasher(keying: .sampled(above: UInt64(size))).hash(fileAt: path).hash == full)  // at the threshold: full

        func key(flipping offset: Int) throws -> ContentHash {
            bytes[offset] ^= 0xFF
            defer { bytes[offset] ^= 0xFF }
            return try ContentHasher().hash(fileAt: try dir.write("big.bin", bytes)).hash
        }
        let end = 1 << 20, piece = 64 << 10
        let span = size - 2 * end - piece
        #expect(try key(flipping: 10) != sampled)                         // the first MiB
        #expect(try key(flipping: size - 10) != sampled)                  // the last MiB
        #expect(try key(flipping: end + span * 17 / 63 + 5) != sampled)  // inside piece 17
        #expect(try key(flipping: end + piece + 4096) == sampled)         // between pieces 0 and 1
        #expect(try ContentHasher().hash(fileAt: try dir.write("longer.bin", bytes + [0])).hash != sampled)  // the size
    }

    /// Touching a mapped page past the end of the file raises SIGBUS; the shim turns it into -1.
    @Test func sigbusInAMappingIsCaught() throws {
        let dir = TemporaryDirectory()
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let path = try dir.write("one-page", [UInt8](repeating: 1, count: page))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let map = try #require(mmap(nil, 2 * page, PROT_READ, MAP_PRIVATE, fd, 0))
        defer { munmap(map, 2 * page) }
        let state = try #require(cxxh_create())
        defer { cxxh_free(state) }
        #expect(cxxh_update_mapped(state, map, page) == 0)
        #expect(cxxh_update_mapped(state, map, 2 * page) == -1)
        // The guard is released: the thread goes on normally.
        cxxh_reset(state)
        #expect(cxxh_update_mapped(state, map, page) == 0)
    }

    @Test func emptyFileHashesLikeEmptyInput() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("empty", [])
        #expect(try ContentHasher().hash(fileAt: path).hash == ContentHash.of([UInt8]()))
    }

    @Test func fifoIsRefusedWithoutBlocking() throws {
        let dir = TemporaryDirectory()
        let path = dir.appending("pipe")
        #expect(mkfifo(path, 0o600) == 0)
        let error = #expect(throws: FileError.self) { try ContentHasher().hash(fileAt: path) }
        #expect(error?.reason == .notRegularFile(.fifo))
        #expect(error?.description.contains(path) == true)
    }

    @Test func directoryIsRefused() throws {
        let dir = TemporaryDirectory()
        let error = #expect(throws: FileError.self) { try ContentHasher().hash(fileAt: dir.path) }
        #expect(error?.reason == .notRegularFile(.directory))
        #expect(error?.description.contains(dir.path) == true)
    }

    @Test func danglingSymlinkIsNamedAsSuch() throws {
        let dir = TemporaryDirectory()
        let link = dir.appending("link")
        #expect(symlink(dir.appending("missing-target"), link) == 0)
        let error = #expect(throws: FileError.self) { try ContentHasher().hash(fileAt: link) }
        #expect(error?.reason == .danglingSymbolicLink)
        #expect(error?.description.contains(link) == true)
        #expect(throws: FileError(path: link, reason: .danglingSymbolicLink)) { try FileSnapshot.of(path: link) }
    }

    @Test func missingFileNamesPathAndReason() throws {
        let path = TemporaryDirectory().appending("nope.jpg")
        let error = #expect(throws: FileError.self) { try ContentHasher().hash(fileAt: path) }
        #expect(error?.reason == .system(operation: "open", .noSuchFileOrDirectory))
        #expect(error?.description == "\(path): open failed: No such file or directory")
    }

    /// A file that keeps growing while it is read is reported, after one retry, as changed,
    /// whether it is mapped (the default for large files) or read.
    @Test(arguments: [ContentHasher.mapThreshold, Int.max])
    func fileChangingDuringHashingIsReported(mapThreshold: Int) throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("growing", [UInt8](repeating: 7, count: 32 << 20))
        let stop = Flag()
        let appender = Thread {
            let fd = open(path, O_WRONLY | O_APPEND)
            defer { close(fd) }
            var byte: UInt8 = 1
            while !stop.isSet {
                _ = write(fd, &byte, 1)
                usleep(50)
            }
        }
        appender.start()
        defer { stop.set() }
        usleep(10_000)
        // Small reads make each pass long enough to overlap many appends.
        let hasher = ContentHasher(bufferSize: 4096, mapThreshold: mapThreshold)
        let error = #expect(throws: FileError.self) { try hasher.hash(fileAt: path) }
        #expect(error?.reason == .changedWhileReading)
        #expect(error?.description == "\(path): changed while reading")
    }
}

/// A flag one thread sets and another polls.
final class Flag: @unchecked Sendable {
    // @unchecked Sendable: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
