import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheIndex

/// The two forms of a posting chunk (gaps and bitmap), read back by every reader, and the
/// writer's choice between them.
struct PostingChunkTests {
    /// Item lists of different shapes: one item, sparse, dense from an unaligned start, dense
    /// with a gap, every number.
    static let shapes: [[UInt32]] = [
        [5],
        [3, 700, 70_000, 7_000_000],
        Array(stride(from: 37, to: 7_900, by: 2)),
        Array(61..<2_000) + Array(5_000..<7_000),
        Array(0..<7_912),
    ]

    static func encoded(_ itemNumbers: [UInt32], bitmap: Bool) -> [UInt8] {
        var out: [UInt8] = []
        if bitmap { Postings.encodeBitmap(itemNumbers[...], into: &out) } else { Postings.encodeGaps(itemNumbers[...], into: &out) }
        return out
    }

    static func decoded(_ chunk: [UInt8]) -> [UInt32] {
        var itemNumbers: [UInt32] = []
        chunk.withUnsafeBytes { c in Postings.forEach(c) { itemNumbers.append($0) } }
        return itemNumbers
    }

    /// What a query's set builder collects from `chunks`, in its array or its bitmap storage.
    static func collected(_ chunks: [[UInt8]], universe: Int) -> ItemSet {
        var builder = ItemSetBuilder(universe: universe)
        for chunk in chunks { chunk.withUnsafeBytes { builder.insert(chunk: $0) } }
        return builder.build()
    }

    @Test(arguments: shapes)
    func bothFormsReadBackTheSameItems(_ itemNumbers: [UInt32]) {
        let universe = Int(itemNumbers.last!) + 1
        for bitmap in [false, true] where !bitmap || itemNumbers.last! - itemNumbers.first! < Postings.bitmapSpan {
            let chunk = Self.encoded(itemNumbers, bitmap: bitmap)
            #expect(chunk.count <= Postings.chunkBytes || !bitmap)
            // Compared as Bools: a failure prints the form, not thousands of numbers.
            let read = Self.decoded(chunk) == itemNumbers
            #expect(read, "bitmap: \(bitmap)")
            #expect(chunk.withUnsafeBytes { Postings.count($0) } == itemNumbers.count)
            // Into an array (a universe large enough that the set stays sparse) and into a bitmap.
            let intoArray = Self.collected([chunk], universe: universe * 64).members == itemNumbers
            let intoBitmap = Self.collected([chunk], universe: universe).members == itemNumbers
            #expect(intoArray, "bitmap: \(bitmap)")
            #expect(intoBitmap, "bitmap: \(bitmap)")
        }
    }

    @Test func aBitmapChunkJoinsASetAlreadyHoldingOthers() {
        // A dense set (bitmap storage) gets a gaps chunk, then bitmap chunks at unaligned starts
        // that share words with what is there, one ending at the universe's last item.
        let universe = 20_003
        let a = Array(stride(from: UInt32(0), to: 9_000, by: 2))
        let b = Array(stride(from: UInt32(9_001), to: 16_000, by: 3))
        let c = Array(UInt32(15_990)..<UInt32(universe))
        let set = Self.collected([Self.encoded(a, bitmap: false), Self.encoded(b, bitmap: true), Self.encoded(c, bitmap: true)],
                                 universe: universe)
        let same = set.members == Array(Set(a + b + c)).sorted()
        #expect(same)
    }

    @Test func damagedChunksEndEarlyAndStayInTheUniverse() {
        let dense = Self.encoded(Array(100..<4_000), bitmap: true)
        // Cut short: the items of the bytes that are there, never more than the count says.
        let cut = Array(dense.prefix(200))
        #expect(Self.decoded(cut).count <= 3_900)
        #expect(Self.collected([cut], universe: 4_000).members.allSatisfy { $0 >= 100 && $0 < 4_000 })
        // In a set kept as a bitmap, items past the universe are dropped, not written out of bounds.
        let set = Self.collected([Self.encoded(Array(0..<5_000), bitmap: false), Self.encoded(Array(5_500..<7_000), bitmap: true)],
                                 universe: 6_000)
        let dropped = set.members == Array(0..<5_000) + Array(5_500..<6_000)
        #expect(dropped)
        // A count of zero, a count larger than the chunk, an empty value.
        for bad: [UInt8] in [[0, 0, 5, 0xFF], [0xFF, 0x7F, 1], [], [Postings.bitmapMark]] {
            #expect(Self.decoded(bad).isEmpty)
            #expect(Self.collected([bad], universe: 100).members.isEmpty)
        }
    }

    @Test func theWriterPicksTheSmallerForm() {
        #expect(PostingWriter.bitmapIsSmaller(Array(0..<64)[...]))
        #expect(PostingWriter.bitmapIsSmaller(Array(stride(from: UInt32(9), to: 900, by: 4))[...]))
        #expect(!PostingWriter.bitmapIsSmaller([3, 700, 70_000][...]))
        #expect(!PostingWriter.bitmapIsSmaller(Array(stride(from: UInt32(0), to: 9_000, by: 20))[...]))
    }

    /// Lists through the index: one every item has (bitmap chunks), one few have (gaps), both
    /// edited in place by removals and re-adds, and answering like the records say.
    @Test func denseListsAreStoredAsBitmapsAndEditedInPlace() throws {
        let dir = TemporaryDirectory()
        let index = try MetadataIndex.open(directory: dir.appending("index"))
        func file(_ i: Int) -> FileItem {
            var attributes: [String: AttributeValue] = [MDItem.fsSize: .number(Double(1_000 + i))]
            if i % 97 == 0 { attributes[MDItem.isoSpeed] = .number(3_200) }
            return FileItem(path: "/p/\(i / 1000)/f\(i).jpg", state: IndexedFileState(size: UInt64(1_000 + i), modificationTime: 1, changeTime: 1, inode: UInt64(i), device: 1),
                            contentHash: withUnsafeBytes(of: UInt64(i + 1)) { Array($0) } + [UInt8](repeating: 7, count: 8), attributes: attributes)
        }
        _ = try index.indexFiles((0..<20_000).map(file))
        let sizes = try index.chunkForms(.exists, MDItem.fsSize)
        #expect(!sizes.isEmpty && sizes.allSatisfy { $0 }, "every chunk of a list all items have is a bitmap")
        let iso = try index.chunkForms(.exists, MDItem.isoSpeed)
        #expect(!iso.isEmpty && iso.allSatisfy { !$0 }, "a list of one item in 97 keeps gaps")
        #expect(try index.search("kMDItemFSSize >= 0").count == 20_000)

        // Remove a run and every third file of another; put some back.
        let removed = (3_000..<9_000).filter { $0 < 5_000 || $0 % 3 == 0 }
        #expect(try index.removeFiles(paths: removed.map { file($0).path }) == removed.count)
        _ = try index.indexFiles(removed.filter { $0 % 2 == 0 }.map(file))
        let left = Set(0..<20_000).subtracting(removed.filter { $0 % 2 == 1 })
        #expect(try index.search("kMDItemFSSize >= 0").count == left.count)
        #expect(try index.search("kMDItemFSSize >= 0 && kMDItemFSSize < 9000").count == left.filter { $0 < 8_000 }.count)
        #expect(try index.search("kMDItemISOSpeed == 3200").count == left.filter { $0 % 97 == 0 }.count)
        #expect(try index.search("kMDItemFSSize != 1500").count == left.count - (left.contains(500) ? 1 : 0))
    }
}
