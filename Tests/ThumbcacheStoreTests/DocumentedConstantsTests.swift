import Foundation
import Testing
import ThumbcacheStore

/// The figures Docs/ state for the store's rules, read from the docs and compared with the code,
/// so a change to one fails until the other follows.
struct DocumentedConstantsTests {
    static func doc(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("Docs/\(name)"), encoding: .utf8)
            .replacingOccurrences(of: "\n  ", with: " ").replacingOccurrences(of: "\n", with: " ")
    }

    @Test func groupCommitLimitsMatchArchitecture() throws {
        let policy = GroupCommitWriter.Policy()
        let text = try Self.doc("ARCHITECTURE.md")
        let batch = "A batch closes at \(policy.maxWrites) writes, \(policy.maxBytes >> 20) MiB, \(policy.maxDelay / 1_000_000) ms after"
        #expect(text.contains(batch), "ARCHITECTURE.md should say: \(batch)")
        let queued = "`enqueue` suspends while more than \(policy.queueCapacity >> 20) MiB are queued"
        #expect(text.contains(queued), "ARCHITECTURE.md should say: \(queued)")
    }

    @Test func hasherThresholdsMatchArchitecture() throws {
        let text = try Self.doc("ARCHITECTURE.md")
        let read = "Files up to \(ContentHasher.mapThreshold >> 10) KiB are read with `read(2)` into one \(ContentHasher.defaultBufferSize >> 10) KiB buffer"
        #expect(text.contains(read), "ARCHITECTURE.md should say: \(read)")
        #expect(text.contains("mapped in \(ContentHasher.mapWindow >> 20) MiB windows"))
    }

    @Test func sampledKeysMatchFormat() throws {
        let text = try Self.doc("FORMAT.md")
        guard case .sampled(let threshold) = ContentHasher.Keying.standard else { Issue.record("the standard keying samples"); return }
        let rule = "Files larger than \(threshold >> 20) MiB are keyed by samples"
        #expect(text.contains(rule), "FORMAT.md should say: \(rule)")
    }

    /// The store's default durability is the one the docs call the library's default, and a
    /// store opened with no options has it.
    @Test func defaultDurabilityMatchesArchitecture() throws {
        #expect(ThumbnailStore.Options().durability == .lastCommitMayBeLost)
        let text = try Self.doc("ARCHITECTURE.md")
        #expect(text.contains("`Durability.lastCommitMayBeLost` (`MDB_NOMETASYNC`, the library default)"))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("durability-\(getpid())-\(UInt64.random(in: 0...UInt64.max))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try ThumbnailStore.open(directory: dir)
        #expect(store.environment.options.durability == .lastCommitMayBeLost)
    }

    @Test func racyWindowMatchesFormat() throws {
        let text = try Self.doc("FORMAT.md")
        #expect(text.contains("within \(StoreWrite.racyWindow / 1_000_000_000) s of the"))
    }
}
