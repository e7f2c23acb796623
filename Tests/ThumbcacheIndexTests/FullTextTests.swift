import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheIndex

/// The words inside files: word breaking, phrases, prefixes, the `c` and `d` flags, ranking,
/// snippets, changed files and one document per content, on real LMDB files.
struct FullTextTests {
    /// A file item with content `hash` and its text indexed under that hash.
    static func add(_ index: MetadataIndex, _ path: String, hash: UInt8, text: String, inode: UInt64? = nil,
                    modified: Double = 1_700_000_000) throws {
        let item = MetadataIndexTests.file(path, inode: inode ?? UInt64(hash), hash: hash, [MDItem.contentModificationDate: .date(modified)])
        _ = try index.indexFiles([item])
        _ = try index.indexTexts([(content: [UInt8](repeating: hash, count: 16), text: Array(text.utf8))])
    }

    static func paths(_ index: MetadataIndex, _ query: String) throws -> [String] {
        try index.search(query, options: SearchOptions(parser: QueryParserTests.parser)).results.map(\.displayName)
    }

    @Test func wordsAreSplitAndFoldedAsSpotlightsFlagsDefine() {
        let breaker = WordBreaker()
        let words = breaker.words("Crème BRÛLÉE, naïve café's 3.14 ﬁle Straße e-mail").map { String(decoding: $0, as: UTF8.self) }
        // NFKC turns the ligature "ﬁ" into "fi"; case folding turns "ß" into "ss".
        #expect(words == ["creme", "brulee", "naive", "cafe's", "3", "14", "file", "strasse", "e", "mail"])
        // Chinese has no spaces: ICU's dictionary finds the words.
        let chinese = breaker.words("我们喜欢北京大学").map { String(decoding: $0, as: UTF8.self) }
        #expect(chinese.count >= 3 && chinese.contains("北京"))
        #expect(breaker.words(String(repeating: "x", count: 65)).isEmpty, "a word past the term limit is not indexed")
    }

    @Test func wordsPhrasesAndPrefixesFindTheirFiles() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        try Self.add(index, "/docs/plants.txt", hash: 1, text: "Photosynthesis turns light into sugar. Plants need light.")
        try Self.add(index, "/docs/physics.txt", hash: 2, text: "The speed of light is constant; sugar is not involved.")
        try Self.add(index, "/docs/cities.txt", hash: 3, text: "我们喜欢北京大学 and the Crème brûlée of Paris")
        #expect(try Self.paths(index, #"kMDItemTextContent == "photosynthesis"cd"#) == ["/docs/plants.txt"])
        #expect(Set(try Self.paths(index, #"kMDItemTextContent == "light"cd"#)) == ["/docs/plants.txt", "/docs/physics.txt"])
        // A phrase: adjacent and in order.
        #expect(try Self.paths(index, #"kMDItemTextContent == "light into sugar"cd"#) == ["/docs/plants.txt"])
        #expect(try Self.paths(index, #"kMDItemTextContent == "sugar into light"cd"#).isEmpty)
        // A prefix.
        #expect(try Self.paths(index, #"kMDItemTextContent == "photosynth*"cd"#) == ["/docs/plants.txt"])
        #expect(try Self.paths(index, #"kMDItemTextContent == "into sug*"cd"#) == ["/docs/plants.txt"])
        // A Chinese word, found inside a run without spaces.
        #expect(try Self.paths(index, #"kMDItemTextContent == "北京"cd"#) == ["/docs/cities.txt"])
        // Combined with attribute predicates, negated, and as plain words.
        #expect(try Self.paths(index, #"kMDItemTextContent == "light"cd && kMDItemFSName == "phys*""#) == ["/docs/physics.txt"])
        #expect(Set(try Self.paths(index, #"kMDItemTextContent != "light"cd"#)) == ["/docs/cities.txt"])
        #expect(try Self.paths(index, "constant sugar") == ["/docs/physics.txt"])
        #expect(try Self.paths(index, #""light into sugar""#) == ["/docs/plants.txt"])
        #expect(try Self.paths(index, "light NOT photosynthesis") == ["/docs/physics.txt"])
        #expect(Set(try Self.paths(index, "photosynthesis || paris")) == ["/docs/plants.txt", "/docs/cities.txt"])
    }

    @Test func caseAndDiacriticsCountUnlessTheFlagsSayNot() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        try Self.add(index, "/a.txt", hash: 1, text: "Dessert: Crème brûlée")
        try Self.add(index, "/b.txt", hash: 2, text: "dessert: creme brulee")
        #expect(Set(try Self.paths(index, #"kMDItemTextContent == "CREME BRULEE"cd"#)) == ["/a.txt", "/b.txt"])
        #expect(try Self.paths(index, #"kMDItemTextContent == "Crème brûlée""#) == ["/a.txt"])
        #expect(try Self.paths(index, #"kMDItemTextContent == "crème"c"#) == ["/a.txt"])
        #expect(try Self.paths(index, #"kMDItemTextContent == "creme"d"#) == ["/b.txt"])
        #expect(try Self.paths(index, #"kMDItemTextContent == "Dessert""#) == ["/a.txt"])
        #expect(try Self.paths(index, #"kMDItemTextContent == "Cr*""#) == ["/a.txt"])
    }

    @Test func theRankingPutsThePlainBestFirst() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        let filler = String(repeating: "nothing to see in this sentence at all. ", count: 40)
        try Self.add(index, "/r/once-in-long.txt", hash: 1, text: filler + "an invoice. " + filler)
        try Self.add(index, "/r/thrice-in-short.txt", hash: 2, text: "invoice invoice invoice for march")
        try Self.add(index, "/r/once-in-short.txt", hash: 3, text: "the invoice for april")
        try Self.add(index, "/r/invoice-2024.txt", hash: 4, text: "payments made in may")  // the word in its name only
        try Self.add(index, "/r/older-same.txt", hash: 5, text: "the invoice for april", inode: 50, modified: 1_600_000_000)
        let results = try index.search("invoice", options: SearchOptions(parser: QueryParserTests.parser)).results
        #expect(results.map(\.displayName) == ["/r/invoice-2024.txt", "/r/thrice-in-short.txt", "/r/once-in-short.txt",
                                               "/r/older-same.txt", "/r/once-in-long.txt"])
        #expect(results.allSatisfy { ($0.score ?? 0) > 0 })
    }

    /// `search --count` asks for no results (a limit of 0): the ranked query counts its matches.
    @Test func aRankedQueryCanBeCountedAlone() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        try Self.add(index, "/r/a.txt", hash: 1, text: "the invoice for april")
        try Self.add(index, "/r/b.txt", hash: 2, text: "invoice invoice for march")
        try Self.add(index, "/r/c.txt", hash: 3, text: "payments made in may")
        let counted = try index.search("invoice", options: SearchOptions(limit: 0, parser: QueryParserTests.parser))
        #expect(counted.count == 2 && counted.results.isEmpty)
        #expect(try index.search("invoice", options: SearchOptions(limit: 1, parser: QueryParserTests.parser)).results.count == 1)
    }

    @Test func snippetsShowTheMatchedWords() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        let text = String(repeating: "Lorem ipsum dolor sit amet. ", count: 30) + "The annual report\nsays revenue grew." +
            String(repeating: " Consectetur adipiscing elit.", count: 30)
        try Self.add(index, "/report.txt", hash: 7, text: text)
        let result = try #require(try index.search(#"kMDItemTextContent == "revenue"cd && kMDItemTextContent == "annual report"cd"#,
                                                   options: SearchOptions(parser: QueryParserTests.parser, snippets: true)).results.first)
        let snippet = try #require(result.snippet)
        let words = snippet.matches.map { String(decoding: Array(snippet.text.utf8)[$0], as: UTF8.self) }
        #expect(words == ["annual", "report", "revenue"])
        #expect(snippet.text.hasPrefix("…") && snippet.text.hasSuffix("…") && !snippet.text.contains("\n"))
        #expect(snippet.text.utf8.count <= MetadataIndex.snippetBytes + 6)
    }

    /// A quoted phrase of plain words is checked in each candidate's name (TextTerm): every word
    /// must start a word of it and the folded name must hold the phrase, ASCII or not.
    @Test func plainPhrasesAreCheckedInNames() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        for (i, name) in ["Holiday Photos 2024.JPG", "photos of a holiday.png", "Crème Brûlée.txt", "notes.txt"].enumerated() {
            _ = try index.indexFiles([MetadataIndexTests.file("/p/" + name, inode: UInt64(i + 1), hash: UInt8(i + 1))])
        }
        #expect(try Self.paths(index, #""holiday photos""#) == ["/p/Holiday Photos 2024.JPG"])
        #expect(try Self.paths(index, #""HOLIDAY PHO""#) == ["/p/Holiday Photos 2024.JPG"])
        #expect(try Self.paths(index, #""holi pho""#).isEmpty, "each word starts one, but the name does not hold the phrase")
        #expect(Set(try Self.paths(index, "holiday photos")) == ["/p/Holiday Photos 2024.JPG", "/p/photos of a holiday.png"])
        #expect(try Self.paths(index, #""creme brulee""#) == ["/p/Crème Brûlée.txt"])
        #expect(try Self.paths(index, #""crème brû""#) == ["/p/Crème Brûlée.txt"])
        #expect(try Self.paths(index, #""brulee creme""#).isEmpty)
        // A list attribute (tags): each of its strings is checked.
        _ = try index.indexFiles([MetadataIndexTests.file("/p/IMG_1.jpg", inode: 8, hash: 8, [MDItem.userTags: .strings(["beach", "summer holiday"])])])
        #expect(try Self.paths(index, #""summer holiday""#) == ["/p/IMG_1.jpg"])
        // More words than a check holds at once (64).
        let long = (0..<70).map { "w\($0)" }.joined(separator: " ")
        _ = try index.indexFiles([MetadataIndexTests.file("/p/" + long, inode: 9, hash: 9)])
        #expect(try Self.paths(index, "\"\(long)\"") == ["/p/" + long])
        #expect(try Self.paths(index, "\"\(long.replacingOccurrences(of: "w69", with: "x69"))\"").isEmpty)
    }

    /// A snippet is looked for in a long text's beginning first (MetadataIndex.snippetHeadBytes);
    /// a passage there with fewer of the query's words than one further on is not taken.
    @Test func snippetsOfLongTextsAreTheWholeTextsBest() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        // Two-byte characters, so that the head's end can fall inside one.
        let filler = { (n: Int) in String(repeating: "café crème brûlée au thé. ", count: n) }
        let head = MetadataIndex.snippetHeadBytes
        let text = "Alpha starts. " + filler(head / 27) + "é" + filler(200) + "where alpha meets beta, once. " + filler(2_000) + "the last word gamma"
        try #require(text.utf8.count > 2 * head)
        try Self.add(index, "/long.txt", hash: 5, text: text)
        func snippet(_ query: String) throws -> TextSnippet {
            let results = try index.search(query, options: SearchOptions(parser: QueryParserTests.parser, snippets: true)).results
            return try #require(results.first?.snippet, "\(query)")
        }
        func matched(_ s: TextSnippet) -> [String] { s.matches.map { String(decoding: Array(s.text.utf8)[$0], as: UTF8.self) } }

        let one = try snippet(#"kMDItemTextContent == "alpha"cd"#)
        #expect(matched(one) == ["Alpha"] && one.text.hasPrefix("Alpha starts.") && one.text.hasSuffix("…"))
        let both = try snippet(#"kMDItemTextContent == "alpha"cd && kMDItemTextContent == "beta"cd"#)
        #expect(matched(both) == ["alpha", "beta"] && both.text.hasPrefix("…") && both.text.hasSuffix("…"), "\(both.text)")
        let last = try snippet(#"kMDItemTextContent == "gamma"cd"#)
        #expect(matched(last) == ["gamma"] && last.text.hasSuffix("the last word gamma"), "\(last.text)")
    }

    @Test func aChangedFileMatchesItsNewWordsOnlyAndOneContentIsOneDocument() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        // Real files: the index takes a file whose path is gone and whose bytes reappear elsewhere for a move.
        let notes = dir.appending("notes.txt"), copy = dir.appending("copy-of-notes.txt")
        for path in [notes, copy] { try "remember the elderberries".write(toFile: path, atomically: false, encoding: .utf8) }
        try Self.add(index, notes, hash: 1, text: "remember the elderberries")
        try Self.add(index, copy, hash: 1, text: "remember the elderberries", inode: 2)
        #expect(Set(try Self.paths(index, "elderberries")) == [notes, copy])
        // The same content again is no new document.
        #expect(try index.hasText(content: [UInt8](repeating: 1, count: 16)))
        #expect(try index.indexTexts([(content: [UInt8](repeating: 1, count: 16), text: Array("other words".utf8))]) == 0)
        // notes.txt now holds other bytes.
        _ = try index.indexFiles([MetadataIndexTests.file(notes, size: 200, inode: 1, hash: 9)])
        _ = try index.indexTexts([(content: [UInt8](repeating: 9, count: 16), text: Array("buy gooseberries".utf8))])
        #expect(try Self.paths(index, "elderberries") == [copy])
        #expect(try Self.paths(index, "gooseberries") == [notes])

        // The copy goes too: its old text is held by no item; a compaction removes it, and the
        // postings are rewritten without it, every other word still found.
        try FileManager.default.removeItem(atPath: copy)
        #expect(try index.removeMissingFiles(under: [dir.path], except: ItemBitmap()) == 1)
        // A warm's stamp is confirmed while no text goes; a removal makes every stamp invalid, and
        // one read before it cannot be confirmed after (a warm's vouch for words rests on them).
        let before = try index.wordsStamps()
        #expect(before.valid.isEmpty)
        #expect(try index.confirmWords(11, since: before))
        #expect(try index.wordsStamps() == .init(valid: [11], removals: before.removals))
        #expect(try index.compactText(dryRun: true).documentsRemoved == 1)
        #expect(try index.wordsStamps().valid == [11])
        let compaction = try index.compactText()
        #expect(compaction.documentsRemoved == 1 && compaction.bytesAfter <= compaction.bytesBefore)
        let afterRemoval = try index.wordsStamps()
        #expect(afterRemoval.valid.isEmpty && afterRemoval.removals == before.removals + 1, "a removed text invalidates every stamp")
        #expect(try !index.confirmWords(12, since: before), "a warm that began before the removal")
        #expect(try index.confirmWords(13, since: afterRemoval))
        #expect(try !index.hasText(content: [UInt8](repeating: 1, count: 16)))
        #expect(try Self.paths(index, "gooseberries") == [notes])
        #expect(try Self.paths(index, "buy").count == 1 && (try Self.paths(index, "elderberries")).isEmpty)
        #expect(try index.compactText().documentsRemoved == 0)
        #expect(try index.wordsStamps().valid == [13], "removing nothing invalidates nothing")
        // At most so many are valid at once.
        for stamp in 0..<UInt64(MetadataIndex.maxWordsStamps) { _ = try index.confirmWords(100 + stamp, since: afterRemoval) }
        #expect(try index.wordsStamps().valid.count == MetadataIndex.maxWordsStamps)
    }

    @Test func phrasesAndConjunctionsAgreeWithAScanAcrossManyBlocks() throws {
        // 3 000 documents from a skewed vocabulary: the common words' postings fill a hundred
        // blocks, the middle ones' (in a third to a half of the documents) a few with gaps
        // between them, the rare ones' one; so intersections leap over blocks and into the gaps
        // between them. Every answer is checked against scanning the texts' words.
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        let vocabulary = ["the", "of", "and", "data", "cache", "light", "sugar", "quartz", "zebra", "yak"]
        let weights = [30, 20, 15, 2, 1.5, 1, 0.7, 0.4, 0.2, 0.1]
        var random = SeededRandom(seed: 38)
        var documents: [[String]] = []
        var files: [FileItem] = [], texts: [(content: [UInt8], text: [UInt8])] = []
        for d in 0..<3000 {
            let words = (0..<Int.random(in: 3...60, using: &random)).map { _ in
                var r = Double.random(in: 0..<weights.reduce(0, +), using: &random)
                return vocabulary[weights.firstIndex { r -= $0; return r < 0 } ?? 0]
            }
            documents.append(words)
            var hash = [UInt8](repeating: 0, count: 16)
            hash[0] = UInt8(d & 0xFF); hash[1] = UInt8(d >> 8); hash[2] = 1
            files.append(FileItem(path: "/t/\(d).txt", state: IndexedFileState(size: 1, modificationTime: 1, changeTime: 1, inode: UInt64(d + 1), device: 1),
                                  contentHash: hash, attributes: [MDItem.fsSize: .number(1)]))
            texts.append((hash, Array(words.joined(separator: " ").utf8)))
        }
        _ = try index.indexFiles(files)
        _ = try index.indexTexts(Array(texts[..<1400]))  // two transactions: later ones append to the last blocks
        _ = try index.indexTexts(Array(texts[1400...]))
        func scan(_ matches: ([String]) -> Bool) -> Set<String> {
            Set(documents.indices.filter { matches(documents[$0]) }.map { "/t/\($0).txt" })
        }
        func phrase(_ p: [String]) -> ([String]) -> Bool {
            { words in words.count >= p.count && (0...(words.count - p.count)).contains { Array(words[$0..<($0 + p.count)]) == p } }
        }
        let phrases = [["the", "of"], ["of", "the"], ["data", "cache"], ["cache", "light"], ["light", "data"], ["the", "quartz"],
                       ["zebra", "the"], ["yak", "zebra"], ["the", "of", "and"], ["light", "the", "data"], ["sugar", "sugar"],
                       ["quartz", "the", "the"], ["data", "light", "cache"]]
        for p in phrases {
            let got = Set(try Self.paths(index, "kMDItemTextContent == \"\(p.joined(separator: " "))\"cd"))
            let want = scan(phrase(p))
            #expect(got == want, "\(p)")
            #expect(!want.isEmpty || p == ["yak", "zebra"], "\(p) finds something")
        }
        let conjunctions = [["the", "yak"], ["yak", "zebra"], ["quartz", "sugar", "of"], ["data", "cache", "light", "the"],
                            ["data", "cache"], ["light", "cache"], ["sugar", "data"]]
        // Before and after a compaction (which merges each word's blocks and copies lone ones).
        for compacted in [false, true] {
            if compacted { #expect(try index.compactText().documentsRemoved == 0) }
            for c in conjunctions {
                let got = Set(try Self.paths(index, c.map { "kMDItemTextContent == \"\($0)\"cd" }.joined(separator: " && ")))
                #expect(got == scan { words in c.allSatisfy(words.contains) }, "\(c)")
            }
            for p in phrases.prefix(5) {
                #expect(Set(try Self.paths(index, "kMDItemTextContent == \"\(p.joined(separator: " "))\"cd")) == scan(phrase(p)), "\(p)")
            }
        }
    }

    @Test func aCursorSeeksAcrossBlocksAndIntoTheGapsBetweenThem() throws {
        // One word in every other document, 1 to 40 times each: dozens of blocks, with a document
        // missing at every block boundary. Cursors seek in random strides, some leaping several
        // blocks; each lands where a plain search of the list says.
        let dir = TemporaryDirectory()
        let index = try MetadataIndexTests.open(dir)
        var random = SeededRandom.forTest()
        let documents = (0..<3000).map { UInt32($0 * 2 + 1) }
        let frequencies = documents.map { _ in Int.random(in: 1...40, using: &random) }
        var blocks: [(key: [UInt8], block: [UInt8])] = []
        var writer = "word".utf8.withContiguousStorageIfAvailable { BlockWriter(term: UnsafeRawBufferPointer($0)) }!
        for (document, frequency) in zip(documents, frequencies) {
            var positions: [UInt8] = []
            for _ in 0..<frequency { Varint.append(&positions, 3) }
            positions.withUnsafeBytes { writer.add(document, frequency, $0) { blocks.append(($0, $1)) } }
        }
        writer.finish { blocks.append(($0, $1)) }
        try index.environment.write { txn in
            for (key, block) in blocks { try txn.put(index.words, key: key, value: block) }
        }
        #expect(blocks.count > 50)
        try index.environment.read { txn in
            for _ in 0..<200 {
                var cursor = try PostingCursor(word: Array("word".utf8), in: index.words, txn)
                #expect(cursor.count == documents.count)
                var target: UInt32 = 0
                while true {
                    let stride: UInt32 = Bool.random(using: &random) ? 8 : 600
                    target += UInt32.random(in: 1...stride, using: &random)
                    let want = documents.firstIndex { $0 >= target }
                    #expect(cursor.seek(target) == (want != nil))
                    guard let want else { break }
                    #expect(cursor.document == documents[want] && Int(cursor.frequency) == frequencies[want])
                    var stream = cursor.positions(), positions: [UInt32] = []
                    while stream.next() { positions.append(stream.position) }
                    let expected: [UInt32] = (0..<frequencies[want]).map { UInt32($0 * 3 + 3) }
                    #expect(positions == expected)
                }
            }
        }
    }

    @Test func postingBlocksRoundTripAndSplit() throws {
        // 500 documents' entries as a batch writes them, through the block writer.
        var entries: [(document: UInt32, positions: [UInt32])] = []
        for d in 0..<500 { entries.append((UInt32(d * 3), (0..<(d % 7 + 1)).map { UInt32($0 * 11 + d) })) }
        var blocks: [(first: UInt32, block: [UInt8])] = []
        func keep(_ key: [UInt8], _ block: [UInt8]) { blocks.append((key.withUnsafeBytes { Postings.readBE($0, at: key.count - 4) }, block)) }
        var writer = "word".utf8.withContiguousStorageIfAvailable { BlockWriter(term: UnsafeRawBufferPointer($0)) }!
        for e in entries {
            var positions: [UInt8] = []
            for (i, p) in e.positions.enumerated() { Varint.append(&positions, UInt64(i == 0 ? p : p - e.positions[i - 1])) }
            positions.withUnsafeBytes { bytes in
                writer.add(e.document, e.positions.count, bytes, keep)
            }
        }
        writer.finish(keep)
        #expect(blocks.count > 1 && blocks.allSatisfy { $0.block.count <= TextPostings.blockBytes })
        var decoded: [(document: UInt32, positions: [UInt32])] = []
        for (first, block) in blocks {
            block.withUnsafeBytes { b in
                #expect(TextPostings.forEach(b, first: first) { document, count, bytes in
                    decoded.append((document, TextPostings.positions(bytes, count: count)))
                })
            }
        }
        #expect(decoded.map(\.document) == entries.map(\.document))
        #expect(decoded.map(\.positions) == entries.map(\.positions))
        #expect([0, 1, 64, 65, 1000, 100_000].allSatisfy { abs(LengthNorm.decode(LengthNorm.encode($0)) - Double(max($0, 1))) <= 0.03 * Double(max($0, 1)) })
    }
}
