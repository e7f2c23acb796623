import Testing
import ThumbcacheLMDB
import ThumbcacheStore
import ThumbcacheTestSupport

struct GroupCommitWriterTests {
    @Test func queuedGroupsCommitInBatches() async throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let writer = GroupCommitWriter(store: store, policy: .init(maxWrites: 64, maxDelay: 50_000_000))
        for g in 0..<500 {
            try await writer.enqueue(ProbeRecords.writes(writer: 1, group: UInt32(g), groupSize: 2, size: 100))
        }
        let failures = await writer.flush()
        #expect(failures.isEmpty)
        #expect(try store.statistics().thumbnails == 1000)
        let counters = writer.counters
        #expect(counters.writes == 1000)
        #expect(counters.commits <= 40, "1000 writes took \(counters.commits) commits")
    }

    @Test func concurrentSubmittersAllSeeTheirCommit() async throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let writer = GroupCommitWriter(store: store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for g in 0..<200 {
                group.addTask {
                    try await writer.submit(ProbeRecords.writes(writer: 2, group: UInt32(g), groupSize: 3, size: 500))
                    // Committed means readable, from this process and any other.
                    let key = ProbeRecords.key(writer: 2, group: UInt32(g), index: 2)
                    #expect(try store.containsThumbnail(key))
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.statistics().thumbnails == 600)
    }

    @Test func aBadGroupFailsAloneAndTheRestCommit() async throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let writer = GroupCommitWriter(store: store, policy: .init(maxDelay: 50_000_000))
        let snapshot = FileSnapshot(device: 1, inode: 1, size: 1, modificationTime: 1, changeTime: 1, kind: .regular)
        for g in 0..<10 {
            try await writer.enqueue(ProbeRecords.writes(writer: 3, group: UInt32(g), groupSize: 1, size: 10))
            if g == 4 {
                // An empty path is an empty key, which LMDB refuses.
                try await writer.enqueue([.file(path: "", StatEntry(snapshot: snapshot, content: .init(high: 0, low: 0), isRacy: false))])
            }
        }
        let failures = await writer.flush()
        #expect(failures.count == 1)
        #expect(try store.statistics().thumbnails == 10)
        #expect(writer.counters.failedGroups == 1)
    }

    @Test func aClosedWriterRefusesWrites() async throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.path)
        let writer = GroupCommitWriter(store: store)
        try await writer.submit(ProbeRecords.writes(writer: 4, group: 0, groupSize: 1, size: 10))
        writer.close()
        await #expect(throws: StoreError.self) {
            try await writer.submit(ProbeRecords.writes(writer: 4, group: 1, groupSize: 1, size: 10))
        }
        #expect(try store.statistics().thumbnails == 1)
    }
}
