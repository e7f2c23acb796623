import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheIndex

/// The index with real LMDB files: items, merging, deletion, expiry, renames, each operator.
struct MetadataIndexTests {
    static func open(_ dir: TemporaryDirectory) throws -> MetadataIndex {
        try MetadataIndex.open(directory: dir.appending("index"))
    }

    static func file(_ path: String, size: UInt64 = 100, inode: UInt64 = 1, hash: UInt8? = nil,
                     _ attributes: [String: AttributeValue] = [:]) -> FileItem {
        var a = attributes
        a[MDItem.fsSize] = a[MDItem.fsSize] ?? .number(Double(size))
        return FileItem(path: path, state: IndexedFileState(size: size, modificationTime: 1, changeTime: 1, inode: inode, device: 1),
                        contentHash: hash.map { [UInt8](repeating: $0, count: 16) }, attributes: a)
    }

    func names(_ index: MetadataIndex, _ query: String, onlyIn: [String] = []) throws -> [String] {
        try index.search(query, options: SearchOptions(onlyIn: onlyIn, parser: QueryParserTests.parser)).results.map(\.displayName).sorted()
    }

    @Test func operatorsOnNumbersAndStrings() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        _ = try index.indexFiles([
            Self.file("/p/a.jpg", size: 10, [MDItem.isoSpeed: .number(100), MDItem.acquisitionModel: .string("Canon EOS 5D")]),
            Self.file("/p/b.jpg", size: 20, [MDItem.isoSpeed: .number(400), MDItem.acquisitionModel: .string("NIKON D750")]),
            Self.file("/p/c.png", size: 30, [MDItem.isoSpeed: .number(400)]),
            Self.file("/p/d.txt", size: 4000),
        ])
        #expect(try names(index, "kMDItemISOSpeed == 400") == ["/p/b.jpg", "/p/c.png"])
        #expect(try names(index, "kMDItemISOSpeed != 400") == ["/p/a.jpg"])  // items without the attribute do not match !=
        #expect(try names(index, "kMDItemFSSize < 20") == ["/p/a.jpg"])
        #expect(try names(index, "kMDItemFSSize <= 20") == ["/p/a.jpg", "/p/b.jpg"])
        #expect(try names(index, "kMDItemFSSize > 20") == ["/p/c.png", "/p/d.txt"])
        #expect(try names(index, "kMDItemFSSize >= 30") == ["/p/c.png", "/p/d.txt"])
        #expect(try names(index, "InRange(kMDItemFSSize, 20, 30)") == ["/p/b.jpg", "/p/c.png"])
        #expect(try names(index, "kMDItemFSSize == 3999") == [])
        #expect(try names(index, #"kMDItemAcquisitionModel == "NIKON D750""#) == ["/p/b.jpg"])
        #expect(try names(index, #"kMDItemAcquisitionModel == "nikon d750""#) == [])
        #expect(try names(index, #"kMDItemAcquisitionModel == "nikon d750"c"#) == ["/p/b.jpg"])
        #expect(try names(index, #"kMDItemAcquisitionModel == "canon*""#) == [])
        #expect(try names(index, #"kMDItemAcquisitionModel == "canon*"c"#) == ["/p/a.jpg"])
        #expect(try names(index, #"kMDItemAcquisitionModel == "*EOS*""#) == ["/p/a.jpg"])
        #expect(try names(index, #"kMDItemAcquisitionModel == "eos"cw"#) == ["/p/a.jpg"])
        #expect(try names(index, #"kMDItemAcquisitionModel != "NIKON D750""#) == ["/p/a.jpg"])
        #expect(try names(index, "kMDItemISOSpeed == 400 && kMDItemFSSize > 25") == ["/p/c.png"])
        #expect(try names(index, "kMDItemISOSpeed == 100 || kMDItemFSSize > 1000") == ["/p/a.jpg", "/p/d.txt"])
        #expect(try names(index, "!(kMDItemISOSpeed == 400)") == ["/p/a.jpg", "/p/d.txt"])
        #expect(try names(index, "NOT kMDItemISOSpeed == 400 && kMDItemFSSize < 100") == ["/p/a.jpg"])
        #expect(try names(index, #"kMDItemFSName == "?.jpg""#) == ["/p/a.jpg", "/p/b.jpg"])
        #expect(try names(index, #"kMDItemPath == "/p/*.png""#) == ["/p/c.png"])
        #expect(try names(index, #"kMDItemPath == "/p/a.jpg""#) == ["/p/a.jpg"])
    }

    @Test func typeErrorsAndUnknownAttributes() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        _ = try index.indexFiles([Self.file("/p/a.jpg")])
        #expect(throws: QueryError.self) { try index.search(#"kMDItemFSSize == "big""#) }
        #expect(throws: QueryError.self) { try index.search("kMDItemFSName == 3") }
        #expect(throws: QueryError.self) { try index.search("kMDItemFSSize > $time.now") }
        let r = try index.search("kMDItemFSSise > 3")
        #expect(r.count == 0)
        #expect(r.unknownAttributes == ["kMDItemFSSise"])
    }

    @Test func caseDiacriticsAndWords() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        _ = try index.indexFiles([
            Self.file("/p/Café Crème.jpg"),
            Self.file("/p/cafe-creme.jpg"),
            Self.file("/p/CAFETERIA.png"),
            Self.file("/p/my holiday 2024.jpg"),
            Self.file("/p/Holiday.png"),
            Self.file("/p/holidays.txt"),
        ])
        #expect(try names(index, #"kMDItemFSName == "café*""#) == [])  // case and accents kept: neither "Café…" nor "cafe…" is "café…"
        #expect(try names(index, #"kMDItemFSName == "Café*""#) == ["/p/Café Crème.jpg"])
        #expect(try names(index, #"kMDItemFSName == "cafe*"c"#) == ["/p/CAFETERIA.png", "/p/cafe-creme.jpg"])
        #expect(try names(index, #"kMDItemFSName == "cafe*"cd"#) == ["/p/CAFETERIA.png", "/p/Café Crème.jpg", "/p/cafe-creme.jpg"])
        #expect(try names(index, #"kMDItemFSName == "*Creme*"d"#) == ["/p/Café Crème.jpg"])
        #expect(try names(index, #"kMDItemFSName == "*creme*"d"#) == ["/p/cafe-creme.jpg"])
        #expect(try names(index, #"kMDItemFSName == "*creme*"cd"#) == ["/p/Café Crème.jpg", "/p/cafe-creme.jpg"])
        #expect(try names(index, #"kMDItemFSName == "*crème*""#) == [])
        #expect(try names(index, #"kMDItemFSName == "*holiday*""#) == ["/p/holidays.txt", "/p/my holiday 2024.jpg"])
        #expect(try names(index, #"kMDItemFSName == "*holiday*"c"#) == ["/p/Holiday.png", "/p/holidays.txt", "/p/my holiday 2024.jpg"])
        #expect(try names(index, #"kMDItemFSName == "holiday"cw"#) == ["/p/Holiday.png", "/p/my holiday 2024.jpg"])
        #expect(try names(index, #"kMDItemFSName == "holiday"w"#) == ["/p/my holiday 2024.jpg"])
        #expect(try names(index, #"kMDItemFSName == "Holiday.png""#) == ["/p/Holiday.png"])
        // Plain words: word prefixes in names, any case and accents, like mdfind.
        #expect(try names(index, "holiday") == ["/p/Holiday.png", "/p/holidays.txt", "/p/my holiday 2024.jpg"])
        #expect(try names(index, "creme") == ["/p/Café Crème.jpg", "/p/cafe-creme.jpg"])
        #expect(try names(index, "holiday 2024") == ["/p/my holiday 2024.jpg"])
        #expect(try names(index, "holiday && kMDItemFSName == \"*.png\"") == ["/p/Holiday.png"])
    }

    @Test func datesWithTimeValues() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        let now = QueryParserTests.now.timeIntervalSince1970
        _ = try index.indexFiles([
            Self.file("/p/now.jpg", [MDItem.contentModificationDate: .date(now - 10)]),
            Self.file("/p/yesterday.jpg", [MDItem.contentModificationDate: .date(now - 86_400)]),
            Self.file("/p/lastweek.jpg", [MDItem.contentModificationDate: .date(now - 8 * 86_400)]),
            Self.file("/p/lastyear.jpg", [MDItem.contentModificationDate: .date(now - 365 * 86_400)]),
        ])
        #expect(try names(index, "kMDItemContentModificationDate >= $time.today") == ["/p/now.jpg"])
        #expect(try names(index, "kMDItemContentModificationDate >= $time.yesterday && kMDItemContentModificationDate < $time.today") == ["/p/yesterday.jpg"])
        #expect(try names(index, "kMDItemContentModificationDate >= $time.this_week") == ["/p/now.jpg", "/p/yesterday.jpg"])
        #expect(try names(index, "kMDItemContentModificationDate >= $time.today(-14)") == ["/p/lastweek.jpg", "/p/now.jpg", "/p/yesterday.jpg"])
        #expect(try names(index, "kMDItemContentModificationDate < $time.this_year") == ["/p/lastyear.jpg"])
        #expect(try names(index, "kMDItemContentModificationDate > $time.now(-60)") == ["/p/now.jpg"])
        #expect(try names(index, "InRange(kMDItemContentModificationDate, $time.iso(2025-01-01), $time.this_month)") == ["/p/lastyear.jpg"])
    }

    @Test func contentTypeTreeMatchesByConformance() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        let image = ["public.image", "public.data", "public.item", "public.content"]
        _ = try index.indexFiles([
            Self.file("/p/a.png", [MDItem.contentType: .string("public.png"), MDItem.contentTypeTree: .strings(["public.png"] + image)]),
            Self.file("/p/b.jpg", [MDItem.contentType: .string("public.jpeg"), MDItem.contentTypeTree: .strings(["public.jpeg"] + image)]),
            Self.file("/p/c.txt", [MDItem.contentType: .string("public.plain-text"),
                                   MDItem.contentTypeTree: .strings(["public.plain-text", "public.text", "public.data", "public.item", "public.content"])]),
        ])
        #expect(try names(index, #"kMDItemContentTypeTree == "public.image""#) == ["/p/a.png", "/p/b.jpg"])
        #expect(try names(index, #"kMDItemContentType == "public.image""#) == [])
        #expect(try names(index, #"kMDItemContentTypeTree == "public.data""#).count == 3)
    }

    @Test func appItemMergesWithItsFileAndDeletingItRestoresTheFile() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        _ = try index.indexFiles([Self.file("/p/IMG_1.jpg", [MDItem.title: .string("file title"), MDItem.isoSpeed: .number(200)])])
        try index.index([SearchableItem(uniqueIdentifier: "photos:1", domainIdentifier: "photos", contentURL: "/p/IMG_1.jpg",
                                        attributes: [MDItem.title: .string("Beach day"), MDItem.keywords: .strings(["sea"])])])
        // One result: the file, with the app's title winning and the file's own ISO kept.
        let r = try index.search(#"kMDItemTitle == "Beach day""#)
        #expect(r.results.map(\.path) == ["/p/IMG_1.jpg"])
        #expect(r.results.first?.identifier == "photos:1")
        #expect(try index.search("kMDItemISOSpeed == 200 && kMDItemKeywords == \"sea\"").count == 1)
        #expect(try index.search(#"kMDItemTitle == "file title""#).count == 0)
        #expect(try index.search("sea").count == 1)
        #expect(try index.search("kMDItemFSSize > 0").count == 1)
        #expect(try index.item(path: "/p/IMG_1.jpg")?.attributes[MDItem.title] == .string("Beach day"))

        try index.deleteItems(identifiers: ["photos:1"])
        #expect(try index.search(#"kMDItemTitle == "Beach day""#).count == 0)
        #expect(try names(index, #"kMDItemTitle == "file title""#) == ["/p/IMG_1.jpg"])
        #expect(try index.search("sea").count == 0)
        #expect(try index.item(path: "/p/IMG_1.jpg")?.attributes[MDItem.title] == .string("file title"))
    }

    @Test func appItemBeforeItsFileAndAfterTheFileIsGone() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        try index.index([SearchableItem(uniqueIdentifier: "notes:7", contentURL: "/p/n.txt", attributes: [MDItem.title: .string("Groceries")])])
        #expect(try index.search("groceries").results.map(\.identifier) == ["notes:7"])
        _ = try index.indexFiles([Self.file("/p/n.txt")])
        let merged = try index.search("groceries")
        #expect(merged.count == 1)
        #expect(merged.results.first?.path == "/p/n.txt")
        #expect(try index.search("kMDItemFSSize > 0").count == 1)
        try index.removeFiles(paths: ["/p/n.txt"])
        let alone = try index.search("groceries")
        #expect(alone.results.map(\.identifier) == ["notes:7"])
        #expect(try index.search("kMDItemFSSize > 0").count == 0)
    }

    @Test func twoPathsWithTheSameContentStayTwoResults() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        try FileManager.default.createDirectory(atPath: dir.appending("a"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.appending("b"), withIntermediateDirectories: true)
        let a = try dir.write("a/x.jpg", [1]), b = try dir.write("b/x.jpg", [1])
        _ = try index.indexFiles([Self.file(a, inode: 1, hash: 7)])
        _ = try index.indexFiles([Self.file(b, inode: 2, hash: 7)])
        let r = try index.search(#"kMDItemFSName == "x.jpg""#)
        #expect(r.results.map(\.path) == [a, b])
        #expect(Set(r.results.map(\.contentHash)).count == 1)
    }

    @Test func deleteByDomainIncludesSubdomainsOnly() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        try index.index([
            SearchableItem(uniqueIdentifier: "1", domainIdentifier: "mail.inbox", attributes: [MDItem.title: .string("one")]),
            SearchableItem(uniqueIdentifier: "2", domainIdentifier: "mail.inbox.archive", attributes: [MDItem.title: .string("two")]),
            SearchableItem(uniqueIdentifier: "3", domainIdentifier: "mail.inboxes", attributes: [MDItem.title: .string("three")]),
            SearchableItem(uniqueIdentifier: "4", domainIdentifier: "notes", attributes: [MDItem.title: .string("four")]),
        ])
        try index.deleteItems(domains: ["mail.inbox"])
        let left = try index.search(#"kMDItemTitle == "*""#).results.compactMap(\.identifier).sorted()
        #expect(left == ["3", "4"])
        try index.deleteAllAppItems()
        #expect(try index.search(#"kMDItemTitle == "*""#).count == 0)
    }

    @Test func expiredItemsAreSwept() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        try index.index([
            SearchableItem(uniqueIdentifier: "old", expirationDate: 1000, attributes: [MDItem.title: .string("old news")]),
            SearchableItem(uniqueIdentifier: "new", expirationDate: 3000, attributes: [MDItem.title: .string("new news")]),
            SearchableItem(uniqueIdentifier: "kept", attributes: [MDItem.title: .string("kept news")]),
        ])
        #expect(try index.sweepExpired(now: 2000) == 1)
        #expect(try index.search("news").results.compactMap(\.identifier).sorted() == ["kept", "new"])
        #expect(try index.sweepExpired(now: 2000) == 0)
        // Re-indexing with a new date moves the item's expiry.
        try index.index([SearchableItem(uniqueIdentifier: "new", expirationDate: 5000, attributes: [MDItem.title: .string("new news")])])
        #expect(try index.sweepExpired(now: 4000) == 0)
        #expect(try index.sweepExpired(now: 6000) == 1)
    }

    @Test func persistsAcrossReopen() throws {
        let dir = TemporaryDirectory()
        do {
            let index = try Self.open(dir)
            _ = try index.indexFiles([Self.file("/p/a.jpg", [MDItem.userTags: .strings(["red", "work"])])])
            try index.index([SearchableItem(uniqueIdentifier: "x", attributes: ["com_example_rating": .number(5)])])
        }
        let index = try Self.open(dir)
        #expect(try names(index, #"kMDItemUserTags == "work""#) == ["/p/a.jpg"])
        #expect(try index.search("com_example_rating >= 4").results.map(\.identifier) == ["x"])
        #expect(throws: IndexError.self) {
            try index.index([SearchableItem(uniqueIdentifier: "y", attributes: ["com_example_rating": .string("five")])])
        }
    }

    /// Thousands of items checked against their records (a two-letter wildcard has no trigram)
    /// are split between two threads; both halves answer from the search's own snapshot, even
    /// when a write lands in between.
    @Test func largeChecksAnswerFromTheSearchSnapshot() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        let n = 3 * QueryExecutor.parallelVerifyCount / 2
        func files(_ word: String, size: UInt64) -> [FileItem] {
            (0..<n).map { Self.file("/p/\($0).jpg", size: size, [MDItem.fsName: .string("\(word) \($0).jpg")]) }
        }
        _ = try index.indexFiles(files("old", size: 1))
        let expression = try QueryParserTests.parser.parse(#"kMDItemFSName == "*ld*""#)
        let during = try index.environment.read { txn in
            _ = try index.indexFiles(files("new", size: 2))  // committed after this snapshot began
            var unknown: [String] = []
            return try index.run(expression, query: "", onlyIn: [], unknown: &unknown, txn).0.count
        }
        #expect(during == n)
        #expect(try index.search(expression).count == 0)
        #expect(try index.search(#"kMDItemFSName == "*ew*""#).count == n)
    }

    /// A file with more attributes than a one-byte count holds: all stored, all searchable.
    @Test func aFileWithManyAttributes() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        var attributes: [String: AttributeValue] = [:]
        for k in 0..<140 { attributes["org_example_a\(k)"] = .number(Double(k)) }
        _ = try index.indexFiles([Self.file("/p/many.dat", attributes), Self.file("/p/few.dat")])
        let item = try #require(try index.item(path: "/p/many.dat"))
        #expect(item.attributes.keys.filter { $0.hasPrefix("org_example_a") }.count == 140)
        #expect(item.attributes["org_example_a139"] == .number(139))
        #expect(try names(index, "org_example_a139 == 139") == ["/p/many.dat"])
        #expect(try names(index, "kMDItemFSSize == 100") == ["/p/few.dat", "/p/many.dat"])
    }

    @Test func renameIsAMove() throws {
        let dir = TemporaryDirectory()
        let old = try dir.write("a.jpg", [1, 2, 3])
        let index = try Self.open(dir)
        let first = try index.indexFiles([Self.file(old, hash: 9)])
        #expect(first == [.added])
        let number = try index.item(path: old)!.itemNumber
        try index.index([SearchableItem(uniqueIdentifier: "app", contentURL: dir.appending("b.jpg"), attributes: [MDItem.title: .string("moved here")])])
        let new = dir.appending("b.jpg")
        #expect(rename(old, new) == 0)
        let second = try index.indexFiles([Self.file(new, hash: 9)])
        #expect(second == [.moved(from: old)])
        #expect(try index.item(path: new)?.itemNumber == number)
        #expect(try index.item(path: old) == nil)
        #expect(try names(index, #"kMDItemFSName == "a.jpg""#) == [])
        #expect(try index.search("moved").results.map(\.path) == [new])
        // Same bytes while the old path still exists: a copy, not a move.
        let copy = try dir.write("c.jpg", [1, 2, 3])
        #expect(try index.indexFiles([Self.file(copy, hash: 9)]) == [.added])
        #expect(try index.indexFiles([Self.file(copy, hash: 9)]) == [.unchanged])
    }

    /// A directory's own files come from `ids`, not from a list of their own: scopes and path
    /// prefixes must still find files at every depth, long paths (hashed keys), app items with a
    /// path, and nothing from a sibling whose name merely starts the same.
    @Test func scopeFindsEveryDepthAndNoSiblings() throws {
        let dir = TemporaryDirectory()
        let index = try Self.open(dir)
        let long = "/s/d/" + String(repeating: "n", count: 420) + ".txt"
        let longDeep = "/s/d/sub/" + String(repeating: "m", count: 420) + ".txt"
        let files = ["/s/d/a.txt", "/s/d/sub/b.txt", "/s/d/sub/deeper/c.txt", "/s/d/z.txt", "/s/d-x/y.txt", "/s/d0/w.txt",
                     "/s/dd/v.txt", "/s/top.txt", long, longDeep]
        _ = try index.indexFiles(files.map { Self.file($0) })
        try index.index([SearchableItem(uniqueIdentifier: "note", attributes: [MDItem.path: .string("/s/d/note.txt"), MDItem.title: .string("n")])])
        // The scope's own sets (a search with so few items checks each one's path instead).
        func scoped(_ dirs: [String]) throws -> [String] {
            try dirs.flatMap { d in
                let (identifiers, exact) = try index.identifiersUnder(d.count > 1 && d.hasSuffix("/") ? String(d.dropLast()) : d)
                #expect(exact)
                return identifiers
            }.sorted()
        }
        #expect(try scoped(["/s/d"]) == ["/s/d/a.txt", "/s/d/sub/b.txt", "/s/d/sub/deeper/c.txt", "/s/d/z.txt", "note", long, longDeep].sorted())
        #expect(try index.search("kMDItemPath == \"*\"", options: SearchOptions(onlyIn: ["/s/d/sub"])).count == 3)
        #expect(try scoped(["/s/d/"]) == scoped(["/s/d"]))
        #expect(try scoped(["/s/d/sub"]) == ["/s/d/sub/b.txt", "/s/d/sub/deeper/c.txt", longDeep].sorted())
        #expect(try scoped(["/s/d-x", "/s/d0"]) == ["/s/d-x/y.txt", "/s/d0/w.txt"])
        #expect(try scoped(["/s"]).count == files.count + 1)
        #expect(try scoped(["/"]).count == files.count + 1)
        #expect(try names(index, #"kMDItemPath == "/s/d/*.txt""#).count == 7)
        #expect(try names(index, #"kMDItemPath == "/s/d/sub/*""#) == ["/s/d/sub/b.txt", "/s/d/sub/deeper/c.txt", longDeep].sorted())
        // No list for a file's own directory (ancestors above it have theirs).
        for (directory, listed) in [("/s/d/sub/deeper", false), ("/s/d/sub", true), ("/s/d", true), ("/s/dd", false)] {
            #expect(try index.hasDirectoryList(directory) == listed, "\(directory)")
        }
    }

    @Test func missingFilesUnderARootAreRemoved() throws {
        let dir = TemporaryDirectory()
        let a = try dir.write("a.txt", [1])
        let b = try dir.write("b.txt", [2])
        let index = try Self.open(dir)
        _ = try index.indexFiles([Self.file(a), Self.file(b), Self.file("/elsewhere/gone.txt")])
        try FileManager.default.removeItem(atPath: b)
        #expect(try index.removeMissingFiles(under: [dir.path]) == 1)
        #expect(try names(index, #"kMDItemFSName == "*.txt""#) == [a, "/elsewhere/gone.txt"].sorted())
        #expect(try names(index, #"kMDItemFSName == "*.txt""#, onlyIn: [dir.path]) == [a])
    }

    /// Items a warm saw are not looked at again: even one whose file is gone by then stays (it
    /// was seen), the others are checked as before.
    @Test func itemsSeenByAWarmAreNotCheckedAgain() throws {
        let dir = TemporaryDirectory()
        let a = try dir.write("a.txt", [1])
        let b = try dir.write("b.txt", [2])
        let c = try dir.write("c.txt", [3])
        let index = try Self.open(dir)
        _ = try index.indexFiles([Self.file(a), Self.file(b, inode: 2), Self.file(c, inode: 3)])
        let states = try index.indexedStates(paths: [a, b, "/not/indexed"])
        #expect(states[0]?.state != nil && states[1]?.state != nil && states[2] == nil)
        let (itemA, itemB) = (try #require(states[0]).item, try #require(states[1]).item)
        var seen = ItemBitmap()
        seen.insert(itemB)
        #expect(seen.contains(itemB) && !seen.contains(itemA))
        try FileManager.default.removeItem(atPath: b)
        try FileManager.default.removeItem(atPath: c)
        #expect(try index.removeMissingFiles(under: [dir.path], except: seen) == 1)  // c only
        #expect(try names(index, #"kMDItemFSName == "*.txt""#) == [a, b].sorted())

        var large = ItemBitmap()
        for n: UInt32 in [0, 63, 64, 1_000_000] { large.insert(n) }
        #expect([0, 63, 64, 1_000_000].allSatisfy(large.contains) && !large.contains(65) && !large.contains(999_999) && !large.contains(5_000_000))
    }
}

