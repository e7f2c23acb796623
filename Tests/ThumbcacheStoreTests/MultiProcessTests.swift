import Foundation
import Testing
import ThumbcacheLMDB
import ThumbcacheStore
import ThumbcacheTestSupport

/// Real processes sharing one cache: they write, read and are killed.
@Suite(.serialized)
struct MultiProcessTests {
    /// Groups present for `writer`, each with how many of its records are there; fails the test on
    /// any record that does not verify.
    static func groups(of writer: UInt32, in store: ThumbnailStore) throws -> [UInt32: Int] {
        var found: [UInt32: Int] = [:]
        try store.forEachThumbnail { key, view in
            if key.content.high == UInt64(writer) {
                #expect(ProbeRecords.verify(key: key, data: view.data), "record \(key) is damaged")
                found[UInt32(key.content.low >> 16), default: 0] += 1
            }
            return true
        }
        return found
    }

    @Test func twoWritersAndAReaderAtOnce() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        // 2 × 150 groups × 4 records × 6 kB ≈ 7 MB, from a 1 MiB initial map: both writers grow it.
        let writers = try [11, 12].map { id in
            try ChildProcess(program: "thumbcache-probe", arguments: ["write", cache, "\(id)", "150", "4", "6000"])
        }
        let reader = try ChildProcess(program: "thumbcache-probe", arguments: ["read", cache, "3"])
        for (id, writer) in zip([11, 12], writers) {
            let (end, stderr) = writer.wait()
            #expect(end == .exited(0), "writer \(id) failed: \(stderr)")
            #expect(writer.output.count == 150)
        }
        let (end, stderr) = reader.wait()
        #expect(end == .exited(0), "reader failed: \(stderr)")
        #expect(reader.output.first?.hasPrefix("passes ") == true)

        let store = try ThumbnailStore.open(directory: cache)
        for id: UInt32 in [11, 12] {
            let groups = try Self.groups(of: id, in: store)
            #expect(groups.count == 150)
            #expect(groups.values.allSatisfy { $0 == 4 })
        }
        #expect(store.environment.info().mapSize >= 7 << 20)
    }

    /// SIGKILL a writer mid-batch, 20 times at different moments: every group it reported
    /// committed is intact, and no group is there in part.
    @Test func killedWritersLoseNothingCommittedAndLeaveNoPartialGroup() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        var generator = SeededRandom.forTest()
        var killedMidRun = 0
        for round in 0..<20 {
            let id = UInt32(100 + round)
            let child = try ChildProcess(program: "thumbcache-probe", arguments: ["write", cache, "\(id)", "100000", "3", "4000"])
            child.waitForLines(1 + Int.random(in: 0..<60, using: &generator), timeout: 60)
            usleep(UInt32.random(in: 0..<20_000, using: &generator))
            child.kill(SIGKILL)
            if child.wait().termination == .signaled(SIGKILL) { killedMidRun += 1 }

            let reported = Set(child.output.compactMap { $0.split(separator: " ").last.flatMap { UInt32($0) } })
            #expect(!reported.isEmpty)
            // Reopened after the kill (and after the earlier rounds' kills).
            let store = try ThumbnailStore.open(directory: cache)
            let present = try Self.groups(of: id, in: store)
            #expect(present.values.allSatisfy { $0 == 3 }, "round \(round): a partial group is visible")
            #expect(reported.isSubset(of: Set(present.keys)), "round \(round): a committed group was lost")
        }
        #expect(killedMidRun == 20)
        // The cache is still writable after all that.
        let store = try ThumbnailStore.open(directory: cache)
        try store.apply(ProbeRecords.writes(writer: 999, group: 0, groupSize: 1, size: 10))
        #expect(try store.containsThumbnail(ProbeRecords.key(writer: 999, group: 0, index: 0)))
    }

    /// A process killed inside a read transaction leaves its reader slot behind while other
    /// processes keep the cache open; the next process to open the cache clears it. (The first
    /// process to open a cache nobody has open resets the whole reader table anyway.)
    @Test func staleReaderSlotsOfKilledProcessesAreCleared() throws {
        let dir = TemporaryDirectory()
        let cache = dir.appending("cache")
        let keptOpen = try ThumbnailStore.open(directory: cache)
        let holder = try ChildProcess(program: "thumbcache-probe", arguments: ["hold-reader", cache])
        #expect(holder.waitForLines(1, timeout: 30) == ["holding"])
        holder.kill(SIGKILL)
        #expect(holder.wait().termination == .signaled(SIGKILL))
        let opener = try ChildProcess(program: "thumbcache-probe", arguments: ["open", cache])
        #expect(opener.wait().termination == .exited(0))
        #expect(opener.output == ["stale-readers-cleared 1"])
        withExtendedLifetime(keptOpen) {}
    }
}
