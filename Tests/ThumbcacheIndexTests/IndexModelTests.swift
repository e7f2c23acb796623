import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheIndex

/// Thousands of generated items, queried through the index and by brute force over the same
/// items; then updates and deletions, and the same again. Lists grow past one chunk, chunks split,
/// shrink and vanish, so this checks the posting list edits as much as the query planner.
/// Batches of ``NewFileBuild/minimumBatch`` files or more build their new files on two threads,
/// smaller ones on the writing thread: both are here, and a large batch that mixes new files,
/// updates and a path given twice.
struct IndexModelTests {
    struct Model: Sendable {
        var size: Double
        var iso: Double?
        var date: Double
        var name: String
        var tags: [String]
        var model: String?
        /// An app attribute (numbered on first use).
        var rating: Double?
        /// An app number nearly unique per item: a batch of new items then has more lists than
        /// ``MetadataIndex/parallelApplyLists``, which starts applying them early (``PostingApplication``).
        var serial: Double
    }

    static let words = ["holiday", "Beach", "café", "report", "IMG", "scan", "Zürich", "draft", "final", "x"]

    static func makeModel(_ r: inout SeededRandom) -> Model {
        let name = (0..<(1 + r.int(3))).map { _ in words[r.int(words.count)] }.joined(separator: r.int(2) == 0 ? "_" : " ")
            + "\(r.int(50)).jpg"
        return Model(size: Double(r.int(100_000)), iso: r.int(3) == 0 ? nil : Double([100, 200, 400, 800, 1600][r.int(5)]),
                     date: 1_600_000_000 + Double(r.int(100_000_000)), name: name,
                     tags: (0..<r.int(3)).map { _ in ["red", "blue", "work", "home", "Work"][r.int(5)] },
                     model: [nil, "canon", "Canon", "CANON", "Nikon", "café"][r.int(6)],
                     rating: r.int(2) == 0 ? nil : Double(r.int(6)), serial: Double(r.int(1_000_000)))
    }

    static func item(_ path: String, _ m: Model) -> FileItem {
        var a: [String: AttributeValue] = [MDItem.fsSize: .number(m.size), MDItem.contentModificationDate: .date(m.date),
                                           MDItem.fsName: .string(m.name)]
        if let iso = m.iso { a[MDItem.isoSpeed] = .number(iso) }
        if !m.tags.isEmpty { a[MDItem.userTags] = .strings(m.tags) }
        if let model = m.model { a[MDItem.acquisitionModel] = .string(model) }
        if let rating = m.rating { a["com_example_rating"] = .number(rating) }
        a["com_example_serial"] = .number(m.serial)
        return FileItem(path: path, state: IndexedFileState(size: UInt64(m.size), modificationTime: 0, changeTime: 0, inode: 0, device: 0),
                        contentHash: nil, attributes: a)
    }

    /// Queries and the same predicate in Swift.
    static let queries: [(String, @Sendable (Model) -> Bool)] = [
        ("kMDItemFSSize < 1000", { $0.size < 1000 }),
        ("InRange(kMDItemFSSize, 20000, 20999)", { $0.size >= 20000 && $0.size <= 20999 }),
        ("kMDItemFSSize >= 99000 || kMDItemFSSize == 5", { $0.size >= 99000 || $0.size == 5 }),
        ("kMDItemISOSpeed == 400", { $0.iso == 400 }),
        ("com_example_rating >= 4", { ($0.rating ?? 0) >= 4 }),
        ("InRange(com_example_serial, 250000, 500000)", { $0.serial >= 250_000 && $0.serial <= 500_000 }),
        (#"kMDItemAcquisitionModel == "canon""#, { $0.model == "canon" }),
        (#"kMDItemAcquisitionModel == "Canon""#, { $0.model == "Canon" }),
        (#"kMDItemAcquisitionModel == "canon"c"#, { $0.model?.lowercased() == "canon" }),
        (#"kMDItemAcquisitionModel == "cafe"d"#, { $0.model == "café" }),
        (#"kMDItemAcquisitionModel != "canon""#, { $0.model != nil && $0.model != "canon" }),
        ("kMDItemISOSpeed != 400", { $0.iso != nil && $0.iso != 400 }),
        ("kMDItemISOSpeed > 200 && kMDItemISOSpeed <= 1600", { ($0.iso ?? 0) > 200 && ($0.iso ?? 0) <= 1600 }),
        ("kMDItemContentModificationDate > $time.iso(2022-01-01T00:00:00Z)", { $0.date > 1_640_995_200 }),
        // Range ends inside buckets of values that are not whole numbers: items there are checked
        // against their records, and only those the rest of the query leaves.
        ("kMDItemContentModificationDate >= $time.iso(2021-03-05T07:13:00Z) && kMDItemISOSpeed == 400",
         { $0.date >= 1_614_928_380 && $0.iso == 400 }),
        ("kMDItemContentModificationDate < $time.iso(2022-07-19T10:11:12Z) || kMDItemFSSize < 500",
         { $0.date < 1_658_225_472 || $0.size < 500 }),
        ("!(kMDItemContentModificationDate < $time.iso(2021-12-24T18:30:00Z)) && com_example_rating == 3",
         { !($0.date < 1_640_370_600) && $0.rating == 3 }),
        ("InRange(com_example_serial, 1234.5, 99876.5) && kMDItemISOSpeed >= 800",
         { $0.serial >= 1234.5 && $0.serial <= 99876.5 && ($0.iso ?? 0) >= 800 }),
        (#"kMDItemFSName == "*holiday*""#, { $0.name.contains("holiday") }),
        (#"kMDItemFSName == "*beach*"c"#, { $0.name.lowercased().contains("beach") }),
        (#"kMDItemFSName == "*zurich*"cd"#, { $0.name.lowercased().contains("zürich") }),
        (#"kMDItemFSName == "IMG*""#, { $0.name.hasPrefix("IMG") }),
        (#"kMDItemFSName == "*1?.jpg""#, { m in m.name.count >= 6 && m.name.hasSuffix(".jpg") && Array(m.name)[m.name.count - 6] == "1" }),
        (#"kMDItemFSName == "x1.jpg""#, { $0.name == "x1.jpg" }),
        (#"kMDItemUserTags == "work""#, { $0.tags.contains("work") }),
        (#"kMDItemUserTags == "Work""#, { $0.tags.contains("Work") }),
        (#"kMDItemUserTags == "work"c"#, { $0.tags.contains { $0.lowercased() == "work" } }),
        (#"kMDItemUserTags == "work" && kMDItemUserTags == "home""#, { $0.tags.contains("work") && $0.tags.contains("home") }),
        // On a list, != means no value is equal: tagged, but not "red".
        (#"kMDItemUserTags != "red""#, { !$0.tags.isEmpty && !$0.tags.contains("red") }),
        (#"!(kMDItemUserTags == "red") && kMDItemFSSize < 5000"#, { !$0.tags.contains("red") && $0.size < 5000 }),
        ("draft", { m in m.name.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).contains { $0.hasPrefix("draft") } }),
        ("fin && kMDItemISOSpeed >= 800", { m in
            m.name.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).contains { $0.hasPrefix("fin") } && (m.iso ?? 0) >= 800 }),
    ]

    func check(_ index: MetadataIndex, _ models: [String: Model]) throws {
        for (query, predicate) in Self.queries {
            let got = try index.search(query, options: SearchOptions(parser: QueryParserTests.parser)).results.compactMap(\.path).sorted()
            let want = models.filter { predicate($0.value) }.keys.sorted()
            let extra = Set(got).subtracting(want), missing = Set(want).subtracting(got)
            #expect(extra.isEmpty && missing.isEmpty,
                    "\(query): \(got.count) results, expected \(want.count); extra \(extra.sorted().prefix(3)), missing \(missing.sorted().prefix(3))")
        }
    }

    @Test func indexAgreesWithBruteForce() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndex.open(directory: dir.appending("index"))
        var r = SeededRandom(seed: 42)
        var models: [String: Model] = [:]
        for (batch, size) in [3000, 1000, 1000, 1000].enumerated() {
            var items: [FileItem] = []
            for i in 0..<size {
                // Files directly in a directory and in subdirectories; "d30" next to "d3".
                let path = "/data/d\(i % 7 == 0 ? 30 : i % 7)/" + (i % 3 == 0 ? "" : "s\(i % 2)/") + "f\(batch)-\(i)"
                let m = Self.makeModel(&r)
                models[path] = m
                items.append(Self.item(path, m))
            }
            _ = try index.indexFiles(items)
        }
        try check(index, models)
        // Change a third, delete a sixth, in scattered order.
        var changed: [FileItem] = []
        var removed: [String] = []
        for path in models.keys.sorted() {
            switch r.int(6) {
            case 0, 1:
                let m = Self.makeModel(&r)
                models[path] = m
                changed.append(Self.item(path, m))
            case 2:
                removed.append(path)
                models[path] = nil
            default: break
            }
        }
        // New files in the same batch (past the threshold), one of them twice: the later wins.
        for i in 0..<600 {
            let path = "/data/new/g\(i)"
            if i == 7 { changed.append(Self.item(path, Self.makeModel(&r))) }
            let m = Self.makeModel(&r)
            models[path] = m
            changed.append(Self.item(path, m))
        }
        #expect(changed.count >= NewFileBuild.minimumBatch)
        _ = try index.indexFiles(changed)
        try index.removeFiles(paths: removed)
        try check(index, models)
        // Scope by directory: the search, and the directory's own set (which a search this small
        // does not read: it checks the candidates' paths instead).
        let scoped = try index.search("kMDItemFSSize >= 0", options: SearchOptions(onlyIn: ["/data/d3"])).count
        #expect(scoped == models.keys.filter { $0.hasPrefix("/data/d3/") }.count)
        for directory in ["/data/d3", "/data/d3/s1", "/data/d30", "/data"] {
            #expect(try index.identifiersUnder(directory).identifiers == models.keys.filter { $0.hasPrefix(directory + "/") }.sorted(),
                    "\(directory)")
        }
    }
}
