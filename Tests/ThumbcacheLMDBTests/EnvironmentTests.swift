import CThumbcacheLMDB
import Foundation
import Testing
import ThumbcacheLMDB
import ThumbcacheTestSupport

struct EnvironmentTests {
    struct Marker: Error {}

    /// Each durability is the LMDB flag that gives it: both flushes, the data's only, or none.
    @Test(arguments: [(Environment.Durability.everyCommit, UInt32(0)), (.lastCommitMayBeLost, UInt32(MDB_NOMETASYNC)),
                      (.deferred, UInt32(MDB_NOSYNC))])
    func durabilityIsTheFlagThatGivesIt(durability: Environment.Durability, flag: UInt32) throws {
        let dir = TemporaryDirectory()
        let env = try Environment.open(directory: dir.path, options: .init(durability: durability))
        #expect(env.flags & UInt32(MDB_NOMETASYNC | MDB_NOSYNC) == flag)
    }

    @Test func roundTripAndDelete() throws {
        let dir = TemporaryDirectory()
        let env = try Environment.open(directory: dir.appending("env"))
        let db = try env.database("things")
        try env.write { txn in
            try txn.put(db, key: Array("a".utf8), value: [1, 2, 3])
            try txn.put(db, key: Array("b".utf8), value: [4])
        }
        let a = try env.read { txn in try txn.get(db, key: Array("a".utf8)).map(Array.init) }
        #expect(a == [1, 2, 3])
        let deleted = try env.write { txn in try txn.delete(db, key: Array("a".utf8)) }
        #expect(deleted)
        let gone = try env.read { txn in try txn.get(db, key: Array("a".utf8)) == nil }
        #expect(gone)
        let again = try env.write { txn in try txn.delete(db, key: Array("a".utf8)) }
        #expect(!again)
    }

    /// `contains` answers as `get` does, without faulting the large values' own pages into the
    /// process (counted as this thread's page faults, in a fresh mapping of the same file).
    @Test func containsDoesNotTouchLargeValues() throws {
        let dir = TemporaryDirectory()
        let keys = (0..<300).map { Array("key-\($0)".utf8) }
        do {
            let env = try Environment.open(directory: dir.path)
            let db = try env.database("large")
            try env.write { txn in
                for (i, key) in keys.enumerated() { try txn.put(db, key: key, value: [UInt8](repeating: UInt8(i % 251), count: 64 << 10)) }
                try txn.put(db, key: Array("small".utf8), value: [1])
            }
        }
        // This thread's page faults so far (RUSAGE_THREAD: other tests run beside this one).
        func faults() -> Int {
            var usage = rusage()
            getrusage(__rusage_who_t(1), &usage)
            return usage.ru_minflt + usage.ru_majflt
        }
        let env = try Environment.open(directory: dir.path)
        let db = try env.database("large")
        let missing = Array("absent".utf8)
        try env.read { txn in
            let small = try txn.contains(db, key: Array("small".utf8)), absent = try txn.contains(db, key: missing)
            #expect(small && !absent)
            var contained = 0, got = 0
            let before = faults()
            for key in keys where try txn.contains(db, key: key) { contained += 1 }
            let byContains = faults() - before
            for key in keys where try txn.get(db, key: key)?.first != nil { got += 1 }
            let byGet = faults() - before - byContains
            #expect(contained == keys.count && got == keys.count)
            #expect(byContains * 10 < byGet, "contains faulted \(byContains) pages, get \(byGet)")
        }
    }

    @Test func writeAbortsWhenBodyThrows() throws {
        let dir = TemporaryDirectory()
        let env = try Environment.open(directory: dir.path)
        let db = try env.database("things")
        #expect(throws: Marker.self) {
            try env.write { txn in
                try txn.put(db, key: [1], value: [1])
                throw Marker()
            }
        }
        let count = try env.read { txn in try txn.count(db) }
        #expect(count == 0)
    }

    @Test func cursorVisitsInKeyOrderFromAStartKey() throws {
        let dir = TemporaryDirectory()
        let env = try Environment.open(directory: dir.path)
        let db = try env.database("ordered")
        try env.write { txn in
            for k: UInt8 in [5, 1, 9, 3, 7] { try txn.put(db, key: [k], value: [k &* 2]) }
        }
        var seen: [UInt8] = []
        try env.read { txn in
            try [UInt8(4)].withUnsafeBytes { start in
                try txn.forEach(db, from: start) { key, value in
                    #expect(value.first == key.first! &* 2)
                    seen.append(key.first!)
                    return key.first! < 7
                }
            }
        }
        #expect(seen == [5, 7])
    }

    @Test func directoryAndFilesArePrivate() throws {
        let dir = TemporaryDirectory()
        let path = dir.appending("nested/cache")
        _ = try Environment.open(directory: path)
        let attrs = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attrs[.posixPermissions] as? Int) == 0o700)
        let data = try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
        #expect((data[.posixPermissions] as? Int) == 0o600)
    }

    @Test func oneEnvironmentPerPathInAProcess() throws {
        let dir = TemporaryDirectory()
        let a = try Environment.open(directory: dir.path)
        let b = try Environment.open(directory: dir.path + "/.")
        #expect(a === b)
    }

    @Test func growsFromATinyMapWithoutAnError() throws {
        let dir = TemporaryDirectory()
        let initial = 256 << 10
        let env = try Environment.open(directory: dir.path, options: .init(mapSize: initial))
        let db = try env.database("big")
        let value = [UInt8](repeating: 0xAB, count: 30_000)
        // 120 × 30 kB ≈ 3.6 MB, 14× the initial map, in batches of 10.
        for batch in 0..<12 {
            try env.write { txn in
                for i in 0..<10 { try txn.put(db, key: [UInt8(batch), UInt8(i)], value: value) }
            }
        }
        #expect(env.info().mapSize >= 10 * initial)
        let count = try env.read { txn in try txn.count(db) }
        #expect(count == 120)
        let intact = try env.read { txn in try txn.get(db, key: [11, 9]).map { $0.elementsEqual(value) } }
        #expect(intact == true)
    }

    @Test func openFailureNamesThePath() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("plain-file", [1, 2, 3])
        #expect {
            _ = try Environment.open(directory: file + "/sub")
        } throws: { error in
            "\(error)".contains(file)
        }
    }
}
