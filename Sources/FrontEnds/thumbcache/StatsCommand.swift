import ArgumentParser
import Thumbcache
import FoundationEssentials
import ThumbcacheSync

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show what the cache holds: entries by kind, bytes, file and map sizes."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(name: .long, help: "Print as JSON.")
    var json = false

    func run() throws {
        try cacheOptions.requireExisting(toDo: "report on")
        let s = try cacheOptions.open().statistics()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(s), as: UTF8.self))
            return
        }
        let kinds = s.thumbnailsByKind.sorted { $0.key < $1.key }.map {
            "\($0.key) \($0.value)" + (s.thumbnailsByKind.count > 1 ? " \(bytes(s.thumbnailBytesByKind[$0.key] ?? 0))" : "")
        }.joined(separator: ", ")
        print("""
            cache:          \(s.directory) (format \(s.formatVersion))
            files known:    \(s.files)
            thumbnails:     \(s.thumbnails)\(kinds.isEmpty ? "" : " (\(kinds))"), \(bytes(s.thumbnailBytes))
            failures:       \(s.failures)
            uploads queued: \(s.uploadsQueued)
            file size:      \(bytes(s.fileSize)) (used \(bytes(s.usedBytes)), free pages \(s.freePages) × \(s.pageSize) B)
            map size:       \(bytes(s.mapSize))
            """)
    }

    private func bytes(_ n: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) B" : fixed(value, places: 1) + " " + units[unit]
    }
}
