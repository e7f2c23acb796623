import ArgumentParser
import FoundationEssentials
import ThumbcacheSync
import Thumbcache

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Verify that the cache and its search index are consistent; --repair fixes what is not.",
        discussion: """
            Reads every record of the cache (the stat cache, thumbnails, access stamps, failure \
            records, queued uploads) and of the search index (items, their keys and content \
            hashes, every posting list, the documents of words) and checks the format's \
            invariants: each record decodes, each key names what it should, a thumbnail is the \
            image its header says, nothing points at a record that is not there, a stat \
            entry that vouches for its file's thumbnails has them stored, and one that vouches \
            for its words has them in the index. Each \
            violation is listed with the record it affects and what a repair does; the exit \
            status is 1 when there is any. What is merely garbage (thumbnails no file has any \
            more) is counted, not a violation: `thumbcache compact --gc` removes it.

            The standard thumbnails thumbcache wrote ($XDG_CACHE_HOME/thumbnails, whose PNGs \
            name thumbcache as their Software) are checked too: each a whole PNG with every \
            CRC right, named for the URI it carries, within its folder's size; a temporary file \
            of a writer that died is a violation. One whose file changed or went is stale, \
            which the standard allows: `thumbcache freedesktop clean` removes those.

            --repair removes the records at fault (a thumbnail or an entry is made again when \
            it is next needed) and, when an item or a list was wrong, makes every posting list \
            again from the item records; nothing else is touched. Then it checks again.

            The check is one read transaction per database file: other processes go on using \
            the cache meanwhile. Run it daily, or after a crash, a full disk or a bad shutdown.

            Examples:
              thumbcache check
              thumbcache check --json
              thumbcache check --repair
            """
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(name: .long, help: "Remove or remake what is inconsistent, then check again.")
    var repair = false

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("The standard thumbnail cache (default: $XDG_CACHE_HOME/thumbnails).", valueName: "dir"))
    var freedesktopDir: String?

    @Flag(name: .long, help: "Leave the standard thumbnail cache out.")
    var noFreedesktop = false

    /// What `--json` prints.
    struct Report: Encodable {
        var directory: String
        var seconds: Double
        var recordsPerSecond: Double
        var store: IntegrityReport
        var index: IntegrityReport?
        var freedesktop: IntegrityReport?
        var violations: Int
        var repaired: Int
    }

    func run() throws {
        try cacheOptions.requireExisting(toDo: "check")
        let store = try cacheOptions.open()
        let hasIndex = FileManager.default.fileExists(atPath: cacheOptions.indexDirectory)
        let index = hasIndex ? try cacheOptions.openIndex() : nil
        let standardDirectory = freedesktopDir ?? FreedesktopThumbnailCache.defaultDirectory
        let standard = !noFreedesktop && FileManager.default.fileExists(atPath: standardDirectory)
            ? FreedesktopThumbnailCache(directory: standardDirectory) : nil
        let started = Date()
        let types = ContentTypeRegistry()
        var (storeReport, indexReport, standardReport) = (try store.check(heldTo: index, types: types), try index?.check(), standard?.check())
        let seconds = Date().timeIntervalSince(started)
        let records = storeReport.recordsChecked + (indexReport?.recordsChecked ?? 0) + (standardReport?.recordsChecked ?? 0)
        var repaired = 0
        if repair, storeReport.violations + (indexReport?.violations ?? 0) + (standardReport?.violations ?? 0) > 0 {
            repaired += try store.repair(storeReport)
            if let index, let found = indexReport { repaired += try index.repair(found) }
            if let standard, let found = standardReport { repaired += standard.repair(found) }
            storeReport = try store.check(heldTo: index, types: types)
            indexReport = try index?.check()
            standardReport = standard?.check()
            storeReport.repaired = repaired
        }
        let violations = storeReport.violations + (indexReport?.violations ?? 0) + (standardReport?.violations ?? 0)
        let report = Report(directory: store.directory, seconds: seconds, recordsPerSecond: seconds > 0 ? Double(records) / seconds : 0,
                            store: storeReport, index: indexReport, freedesktop: standardReport, violations: violations, repaired: repaired)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(Self.text(report))
        }
        if violations > 0 { throw ExitCode(1) }
    }

    static func text(_ r: Report) -> String {
        func counts(_ checked: [String: Int]) -> String {
            checked.isEmpty ? "empty" : checked.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        let records = r.store.recordsChecked + (r.index?.recordsChecked ?? 0) + (r.freedesktop?.recordsChecked ?? 0)
        var lines = ["Checked \(r.directory) in \(fixed(r.seconds, places: 2)) s: \(records) records (\(fixed(r.recordsPerSecond, places: 0)) records/s)"]
        lines.append("  cache: " + counts(r.store.checked))
        lines.append(r.index.map { "  index: " + counts($0.checked) } ?? "  index: none")
        if let standard = r.freedesktop { lines.append("  standard thumbnails thumbcache wrote: " + (standard.checked.isEmpty ? "none" : counts(standard.checked))) }
        let garbage = r.store.garbage.merging(r.index?.garbage ?? [:], uniquingKeysWith: +)
        if !garbage.isEmpty {
            lines.append("  garbage (`thumbcache compact --gc` removes it): " + garbage.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
        }
        if let stale = r.freedesktop?.garbage.values.reduce(0, +), stale > 0 {
            lines.append("  stale standard thumbnails (`thumbcache freedesktop clean` removes them): \(stale)")
        }
        if r.repaired > 0 { lines.append("  repaired: \(r.repaired) records removed or lists made again") }
        let findings = r.store.findings + (r.index?.findings ?? []) + (r.freedesktop?.findings ?? [])
        if r.violations == 0 {
            lines.append("  no violations")
        } else {
            lines.append("  violations: \(r.violations)")
            for f in findings { lines.append("    \(f.database) \(f.record): \(f.problem) (repair: \(f.repair))") }
            if findings.count < r.violations { lines.append("    … and \(r.violations - findings.count) more") }
            if r.repaired == 0 { lines.append("  `thumbcache check --repair` removes them") }
        }
        return lines.joined(separator: "\n")
    }
}
