import Foundation
import Testing
import ThumbcacheLMDB
import ThumbcacheTestSupport
@testable import ThumbcacheIndex

/// The items of `Fixtures/index-vN/data.mdb`: indexes written by format version N (``write(to:)``
/// run on an empty index by commit 94a4f6b for version 1, by 3c7ea91 for version 2, by 894f3fc
/// for version 3, which also indexed ``texts``). Files in nested directories, one with a path
/// too long for a plain key, an app item merged with a file, a standalone one with a path, a
/// client state.
enum UpgradeFixture {
    static let longDirectory = "/home/ana/" + String(repeating: "archive-", count: 40)
    static let longPath = longDirectory + "/" + String(repeating: "x", count: 120) + ".txt"

    static func file(_ path: String, size: UInt64, hash: UInt8, _ attributes: [String: AttributeValue] = [:]) -> FileItem {
        var a = attributes
        a[MDItem.fsSize] = .number(Double(size))
        a[MDItem.contentModificationDate] = .date(1_700_000_000 + Double(hash) * 86_400)
        return FileItem(path: path, state: IndexedFileState(size: size, modificationTime: 1, changeTime: 1, inode: UInt64(hash), device: 1),
                        contentHash: [UInt8](repeating: hash, count: 16), attributes: a)
    }

    static let files = [
        file("/home/ana/Photos/2024/IMG_0001.jpg", size: 4_812_345, hash: 1,
             [MDItem.isoSpeed: .number(200), MDItem.acquisitionModel: .string("ILCE-7M3"), MDItem.pixelWidth: .number(6000)]),
        file("/home/ana/Photos/2024/IMG_0002.jpg", size: 5_120_000, hash: 2,
             [MDItem.isoSpeed: .number(800), MDItem.acquisitionModel: .string("ILCE-7M3"), MDItem.pixelWidth: .number(4000)]),
        file("/home/ana/Photos/2023/beach/DSC_77.jpg", size: 812_000, hash: 3, [MDItem.userTags: .strings(["holiday", "Sea"])]),
        file("/home/ana/Documents/report.pdf", size: 120_400, hash: 4, [MDItem.title: .string("Quarterly report")]),
        file("/home/ana/notes.txt", size: 512, hash: 5),
        file(longPath, size: 9000, hash: 6),
    ]

    static func write(to index: MetadataIndex) throws {
        _ = try index.indexFiles(files)
        var batch = IndexBatch()
        batch.index([
            SearchableItem(uniqueIdentifier: "photos:1", domainIdentifier: "photos", contentURL: "/home/ana/Photos/2024/IMG_0001.jpg",
                           attributes: [MDItem.title: .string("Beach day"), MDItem.keywords: .strings(["sea"])]),
            SearchableItem(uniqueIdentifier: "notes:2", domainIdentifier: "notes", contentURL: "/home/ana/Photos/2024/list.txt",
                           attributes: [MDItem.title: .string("Groceries"), MDItem.path: .string("/home/ana/Photos/2024/list.txt"),
                                        "com_example_rating": .number(5)]),
        ])
        try index.perform(batch, clientState: [1, 2, 3], client: "photos")
    }

    /// The words inside two of the files, and a text no file holds (version 3 on).
    static let texts: [(content: [UInt8], text: [UInt8])] = [
        ([UInt8](repeating: 4, count: 16), Array("Quarterly report: revenue grew in the third quarter; the report ends here.".utf8)),
        ([UInt8](repeating: 5, count: 16), Array("Notes: buy milk, call Ana about the quarterly report, water the plants.".utf8)),
        ([UInt8](repeating: 9, count: 16), Array("A text no file holds any more: quarterly".utf8)),
    ]

    /// Full-text queries whose answers must not depend on the layout the postings were written in.
    static let textQueries = [
        #"kMDItemTextContent == "quarterly report"cd"#, #"kMDItemTextContent == "report"cd"#,
        #"kMDItemTextContent == "quarter*"cd"#, #"kMDItemTextContent == "milk"cd && kMDItemTextContent == "ana"cd"#,
        #"kMDItemTextContent == "Quarterly"c"#, #""third quarter""#,
    ]

    /// Queries whose answers must not depend on the format the index was written in.
    static let queries: [(String, [String])] = [
        ("kMDItemFSSize >= 0", []),
        ("InRange(kMDItemFSSize, 4000000, 6000000)", []),
        ("kMDItemFSSize < 1000", []),
        ("kMDItemFSSize > 812000", []),
        (#"kMDItemAcquisitionModel == "ILCE-7M3" && kMDItemISOSpeed >= 400"#, []),
        ("kMDItemPixelWidth > 5000", []),
        ("kMDItemContentModificationDate >= $time.iso(2023-11-16T00:00:00Z)", []),
        ("sea", []),
        ("beach", []),
        (#"kMDItemFSName == "*IMG*""#, []),
        (#"kMDItemPath == "/home/ana/Photos/*""#, []),
        ("com_example_rating >= 4", []),
        ("kMDItemTitle == \"*\"", ["/home/ana/Photos/2024"]),
        ("kMDItemFSSize >= 0", ["/home/ana/Photos/2024"]),
        ("kMDItemFSSize >= 0", ["/home/ana/Photos"]),
        ("kMDItemFSSize >= 0", ["/home/ana"]),
        ("kMDItemFSSize >= 0", [longDirectory]),
        ("kMDItemFSSize >= 0", ["/"]),
    ]
}

/// Opening an index of an older format upgrades it in place: the search lists are made again from
/// the records (which every version shares), so it answers as an index written by this version.
struct FormatUpgradeTests {
    static func answers(_ index: MetadataIndex) throws -> [[String]] {
        try UpgradeFixture.queries.map { query, onlyIn in
            try index.search(query, options: SearchOptions(onlyIn: onlyIn, parser: QueryParserTests.parser)).results
                .map { $0.path ?? $0.identifier ?? "?" }.sorted()
        }
    }

    @Test(arguments: [1, 2, 3])
    func olderVersionsAreRebuiltAndAnswerAsNew(version: Int) throws {
        let dir = TemporaryDirectory()
        let path = try IndexFixtures.copy(version: version, into: dir.appending("index"))
        let upgraded = try MetadataIndex.open(directory: path)
        #expect(try upgraded.statistics().items == 8)
        let fresh = try MetadataIndex.open(directory: dir.appending("fresh"))
        try UpgradeFixture.write(to: fresh)
        if version >= 3 {
            // The postings of full-text layout 1 (positions beside each document), rewritten in
            // layout 2 (documents first): the same answers as postings written anew.
            _ = try fresh.indexTexts(UpgradeFixture.texts)
            let textAnswers = { (index: MetadataIndex) in
                try UpgradeFixture.textQueries.map { try index.search($0, options: SearchOptions(parser: QueryParserTests.parser)).results.map(\.displayName).sorted() }
            }
            let got = try textAnswers(upgraded), want = try textAnswers(fresh)
            #expect(got == want)
            #expect(want[0] == ["/home/ana/Documents/report.pdf", "/home/ana/notes.txt"] && want[3] == ["/home/ana/notes.txt"] && want[5] == ["/home/ana/Documents/report.pdf"])
            let layout = try upgraded.environment.read { txn in try txn.get(upgraded.texts, key: MetadataIndex.TextKey.version).map(Array.init) }
            #expect(layout == [MetadataIndex.fullTextVersion])
            #expect(try upgraded.compactText().documentsRemoved == 1)
            #expect(try textAnswers(upgraded) == want)
        }
        let got = try Self.answers(upgraded), want = try Self.answers(fresh)
        for (k, (query, onlyIn)) in UpgradeFixture.queries.enumerated() {
            #expect(got[k] == want[k], "\(query) in \(onlyIn)")
        }
        // A few answers spelled out, so the comparison cannot pass on two empty indexes.
        #expect(want[1] == ["/home/ana/Photos/2024/IMG_0001.jpg", "/home/ana/Photos/2024/IMG_0002.jpg"])
        #expect(want[13] == ["/home/ana/Photos/2024/IMG_0001.jpg", "/home/ana/Photos/2024/IMG_0002.jpg"])
        #expect(want[16] == [UpgradeFixture.longPath])
        #expect(want[12] == ["/home/ana/Photos/2024/IMG_0001.jpg", "/home/ana/Photos/2024/list.txt"])

        // Stamped with this version; version 1's own-directory list is gone; dense lists are in
        // the bitmap form of version 3; nothing else lost.
        let stamped = try upgraded.environment.read { txn in try txn.get(upgraded.meta, key: MetadataIndex.versionKey).map(Array.init) }
        #expect(stamped == [UInt8(MetadataIndex.formatVersion)])
        #expect(try !upgraded.hasDirectoryList("/home/ana/Photos/2023/beach"))
        #expect(try upgraded.chunkForms(.exists, MDItem.fsSize) == [true])
        #expect(try upgraded.clientState(client: "photos") == [1, 2, 3])
        #expect(try upgraded.item(identifier: "photos:1")?.attributes[MDItem.title] == .string("Beach day"))
        // Writing goes on as usual.
        _ = try upgraded.indexFiles([UpgradeFixture.file("/home/ana/Photos/2024/IMG_0003.jpg", size: 5_000_000, hash: 7)])
        #expect(try upgraded.search("InRange(kMDItemFSSize, 4000000, 6000000)").count == 3)
    }

    @Test func newerVersionsAreRefused() throws {
        let dir = TemporaryDirectory()
        let path = try IndexFixtures.copy(version: 1, into: dir.appending("index"))
        do {
            let index = try MetadataIndex.open(directory: path)
            try index.environment.write { txn in try txn.put(index.meta, key: MetadataIndex.versionKey, value: [99]) }
        }
        let error = #expect(throws: IndexError.self) { _ = try MetadataIndex.open(directory: path) }
        guard case .formatVersion(99, MetadataIndex.formatVersion)? = error?.reason else {
            Issue.record("expected a format version error, got \(String(describing: error))")
            return
        }
    }
}

/// An index error keeps LMDB's error as its cause, so callers can tell what failed.
struct IndexErrorTests {
    @Test func aDamagedFileKeepsLMDBsError() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("index"), withIntermediateDirectories: true)
        try dir.write("index/data.mdb", [UInt8](repeating: 0x5A, count: 16_384))
        do {
            _ = try MetadataIndex.open(directory: dir.appending("index"))
            Issue.record("a data file of junk should not open")
        } catch {
            guard case .database(let cause) = error.reason, let environment = cause as? EnvironmentError else {
                Issue.record("expected the LMDB error as the cause, got \(error.reason)")
                return
            }
            #expect(environment.code == .invalid)
            #expect(error.description.contains(dir.appending("index")))
        }
    }
}
