import CThumbcacheXXHash
import Glibc

/// The posting edits of one write transaction, gathered cheaply and applied per list at the end.
///
/// Bulk indexing makes about sixty edits per item, so this is the hot path of ingest: each list's
/// key prefix is interned once in a ``TermTable`` (XXH3 and one memcmp, no allocation per key),
/// and each edit is one 8-byte append (list number · item number · add/remove). At the end a
/// counting sort groups the edits per list, keeping their order, and the lists are applied in
/// key order.
struct PostingAccumulator {
    private var table = TermTable()
    /// Fast paths that skip hashing: existence lists by attribute, ASCII trigrams by their 21-bit
    /// code (a table per attribute). Allocated on first use: an empty accumulator is free.
    private var existsLists: [Int32] = []
    private var trigramAttributes: [UInt16] = []
    /// List numbers by attribute (position in `trigramAttributes`) and trigram code, -1 if none yet.
    private var trigramLists: [Int32] = []
    /// list number << 32 | item number << 1 | (1 for add), in the order made.
    private var edits: [UInt64] = []
    private var scratch: [UInt8] = []

    @inline(__always) private mutating func append(_ list: Int32, _ itemNumber: UInt32, add: Bool = true) {
        edits.append(UInt64(UInt32(list)) << 32 | UInt64(itemNumber) << 1 | (add ? 1 : 0))
    }

    /// The list number of a key prefix; lists the fast paths know get the same number here.
    private mutating func list(_ prefix: UnsafeRawBufferPointer) -> Int32 {
        if prefix.count >= 4 {
            let attribute = UInt16(prefix[1]) << 8 | UInt16(prefix[2])
            switch prefix[0] {
            case PostingKind.exists.rawValue where prefix.count == 4: return existsList(attribute)
            case PostingKind.trigram.rawValue where prefix.count == 7 && prefix[3] < 0x80 && prefix[4] < 0x80 && prefix[5] < 0x80:
                return trigramList(attribute, prefix[3], prefix[4], prefix[5])
            default: break
            }
        }
        return table.intern(prefix)
    }

    /// Lists with edits (or that had some).
    var listCount: Int { table.count }

    mutating func add(_ prefix: UnsafeRawBufferPointer, _ itemNumber: UInt32) { append(list(prefix), itemNumber) }
    mutating func remove(_ prefix: UnsafeRawBufferPointer, _ itemNumber: UInt32) { append(list(prefix), itemNumber, add: false) }

    mutating func addExists(_ attribute: UInt16, _ itemNumber: UInt32) { append(existsList(attribute), itemNumber) }

    /// An ASCII trigram (each byte < 0x80).
    mutating func addTrigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8, _ itemNumber: UInt32) {
        append(trigramList(attribute, a, b, c), itemNumber)
    }

    mutating func addNumber(_ attribute: UInt16, _ bucket: UInt32, _ itemNumber: UInt32) {
        withUnsafeBytes(of: bucket.bigEndian) { add(.number, attribute, $0[1...], itemNumber) }  // the 3-byte bucket term
    }

    /// Adds a term of `kind` for `attribute`.
    mutating func add(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>, _ itemNumber: UInt32) {
        append(list(kind, attribute, term), itemNumber)
    }

    /// Adds an edit to list number `list` (from ``list(_:_:_:)``).
    mutating func add(list: Int32, _ itemNumber: UInt32) { append(list, itemNumber) }

    /// The number of the list of a term of `kind` for `attribute` (the key prefix is built here,
    /// in a reused buffer). A caller that meets the same term often can keep the number.
    mutating func list(_ kind: PostingKind, _ attribute: UInt16, _ term: some Collection<UInt8>) -> Int32 {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(kind.rawValue)
        scratch.append(UInt8(attribute >> 8))
        scratch.append(UInt8(attribute & 0xFF))
        scratch.append(contentsOf: term)
        scratch.append(0)
        return scratch.withUnsafeBytes { list($0) }
    }

    private mutating func existsList(_ attribute: UInt16) -> Int32 {
        if existsLists.isEmpty { existsLists = [Int32](repeating: -1, count: 1 << 16) }
        var l = existsLists[Int(attribute)]
        if l < 0 {
            l = Postings.prefix(.exists, attribute, []).withUnsafeBytes { table.intern($0) }
            existsLists[Int(attribute)] = l
        }
        return l
    }

    private mutating func trigramList(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int32 {
        let ca = Self.trigramCodes[Int(a)], cb = Self.trigramCodes[Int(b)], cc = Self.trigramCodes[Int(c)]
        guard ca != 0 && cb != 0 && cc != 0 else { return Postings.prefix(.trigram, attribute, [a, b, c]).withUnsafeBytes { table.intern($0) } }
        // A table per attribute with trigrams (names, titles: a few), found by a linear search.
        let t: Int
        if let known = trigramAttributes.firstIndex(of: attribute) { t = known } else {
            t = trigramAttributes.count
            trigramLists.append(contentsOf: repeatElement(-1, count: 1 << 18))
            trigramAttributes.append(attribute)
        }
        let slot = t << 18 | Int(ca) << 12 | Int(cb) << 6 | Int(cc)
        var l = trigramLists[slot]
        if l < 0 {
            l = Postings.prefix(.trigram, attribute, [a, b, c]).withUnsafeBytes { table.intern($0) }
            trigramLists[slot] = l
        }
        return l
    }

    /// 6-bit codes of the ASCII characters common in folded names (0: none; such trigrams are
    /// interned like any term): a trigram's table slot is 18 bits, 1 MB per attribute, which
    /// stays in cache where a slot per 7-bit character (8 MB) did not.
    private static let trigramCodes: [UInt8] = {
        var codes = [UInt8](repeating: 0, count: 128)
        let characters = [1, 2] + Array(" .-_()[],'&+!#@~=%$;".utf8) + Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for (k, c) in characters.enumerated() { codes[Int(c)] = UInt8(k + 1) }
        return codes
    }()

    /// Adds the edits of `other` after this accumulator's: for an item in both, `other`'s
    /// edit is the later one and wins when applied.
    mutating func append(contentsOf other: PostingAccumulator) {
        guard !other.edits.isEmpty else { return }
        var numbers = [Int32](repeating: -1, count: other.table.count)
        other.table.withKeys { key in
            for n in numbers.indices { numbers[n] = list(key(n)) }
        }
        edits.reserveCapacity(edits.count + other.edits.count)
        for e in other.edits { edits.append(UInt64(UInt32(numbers[Int(e >> 32)])) << 32 | (e & 0xFFFF_FFFF)) }
    }

    /// The edits grouped per list, lists in key order.
    func grouped() -> GroupedEdits {
        let lists = table.count
        // Counting sort by list number: stable, so each list's edits keep their order.
        var starts = [Int](repeating: 0, count: lists + 1)
        for e in edits { starts[Int(e >> 32) + 1] += 1 }
        for i in 0..<lists { starts[i + 1] += starts[i] }
        var next = starts
        var sorted = [UInt32](repeating: 0, count: edits.count)
        for e in edits {
            let l = Int(e >> 32)
            sorted[next[l]] = UInt32(truncatingIfNeeded: e)
            next[l] += 1
        }
        let order = edits.isEmpty ? [] : table.sortedOrder().filter { starts[$0 + 1] > starts[$0] }
        return GroupedEdits(table: table, sorted: sorted, starts: starts, order: order)
    }
}

/// A transaction's posting edits per list, lists in key order (see ``PostingAccumulator/grouped()``).
struct GroupedEdits: Sendable {
    fileprivate let table: TermTable
    fileprivate let sorted: [UInt32]
    fileprivate let starts: [Int]
    /// List numbers in key order.
    fileprivate let order: [Int]

    var count: Int { order.count }

    /// Calls `body` with the key prefix and edits (item << 1 | add, in the order made) of the
    /// lists at `positions` in key order.
    func forEachList(_ positions: Range<Int>, _ body: (UnsafeRawBufferPointer, ArraySlice<UInt32>) throws -> Void) rethrows {
        try table.withKeys { key in
            for l in order[positions] { try body(key(l), sorted[starts[l]..<starts[l + 1]]) }
        }
    }

    /// The position that splits the lists into two parts, the first with about `firstShare` of
    /// the work (a list costs its lookup and write, an edit its share of decoding and encoding).
    func balancedSplit(firstShare: Double = 0.5) -> Int {
        let weight = { (l: Int) in 16 + self.starts[l + 1] - self.starts[l] }
        let total = Double(order.reduce(0) { $0 + weight($1) })
        var sum = 0
        for (position, l) in order.enumerated() {
            sum += weight(l)
            if Double(sum) >= total * firstShare { return position + 1 }
        }
        return count
    }
}

/// Interned byte strings: one arena, an open-addressing table of (hash tag, number) slots.
///
/// A lookup is XXH3 over the key, a probe of 8-byte slots and one memcmp. The keys live in one
/// arena rather than an array per list, so sorting the lists and merging accumulators read them
/// in place.
struct TermTable {
    private var arena: [UInt8] = []
    /// Key `i` is `arena[ends[i - 1] ..< ends[i]]` (with `ends[-1]` = 0).
    private var ends: [UInt32] = []
    /// 0 = empty; else the hash's high 32 bits << 32 | (number + 1).
    private var slots = [UInt64](repeating: 0, count: 1024)

    var count: Int { ends.count }

    /// The number of `key`, adding it if new (numbers count up from 0).
    mutating func intern(_ key: UnsafeRawBufferPointer) -> Int32 {
        let h = cxxh_hash64(key.baseAddress, key.count)
        let (found, i) = probe(key, h)
        if let found { return found }
        let n = ends.count
        arena.append(contentsOf: key)
        ends.append(UInt32(arena.count))
        slots[i] = h & Self.tagMask | UInt64(n + 1)
        if ends.count * 2 > slots.count { grow() }
        return Int32(n)
    }

    /// The number of `key`, if it is in the table.
    func find(_ key: UnsafeRawBufferPointer) -> Int32? {
        probe(key, cxxh_hash64(key.baseAddress, key.count)).number
    }

    /// The number of `key` (hash `h`) if present, and the slot where the search ended.
    // Hot path: the key check is inline, not through withKeys' closure (Docs/PERFORMANCE.md).
    @inline(__always) private func probe(_ key: UnsafeRawBufferPointer, _ h: UInt64) -> (number: Int32?, slot: Int) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        let found: Int32? = slots.withUnsafeBufferPointer { s in
            arena.withUnsafeBytes { a in
                ends.withUnsafeBufferPointer { e in
                    while s[i] != 0 {
                        if s[i] & Self.tagMask == h & Self.tagMask {
                            let n = Int(s[i] & 0xFFFF_FFFF) - 1
                            let start = n == 0 ? 0 : Int(e[n - 1])
                            if ByteString.equal(UnsafeRawBufferPointer(rebasing: a[start..<Int(e[n])]), key) { return Int32(n) }
                        }
                        i = (i + 1) & mask
                    }
                    return nil
                }
            }
        }
        return (found, i)
    }

    private static let tagMask: UInt64 = 0xFFFF_FFFF_0000_0000

    private mutating func grow() {
        var bigger = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = bigger.count - 1
        withKeys { key in
            for n in 0..<count {
                let k = key(n)
                let h = cxxh_hash64(k.baseAddress, k.count)
                var i = Int(truncatingIfNeeded: h) & mask
                while bigger[i] != 0 { i = (i + 1) & mask }
                bigger[i] = h & Self.tagMask | UInt64(n + 1)
            }
        }
        slots = bigger
    }

    /// Calls `body` with a function giving the bytes of key `n` (valid inside `body` only).
    func withKeys<R>(_ body: ((Int) -> UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try arena.withUnsafeBytes { a in
            try ends.withUnsafeBufferPointer { e in
                try body { n in
                    let start = n == 0 ? 0 : Int(e[n - 1])
                    return UnsafeRawBufferPointer(rebasing: a[start..<Int(e[n])])
                }
            }
        }
    }

    /// Key numbers in byte order of the keys.
    func sortedOrder() -> [Int] {
        withKeys { key in
            // Sorted on eight bytes at a time as a number: keys sharing a long beginning (the
            // directories of one home) compare as numbers, not memcmp calls, level after level.
            var heads: [(head: UInt64, n: Int32)] = (0..<count).map { n in (ByteString.head(key(n)), Int32(n)) }
            Self.sort(&heads[...], offset: 0, key)
            return heads.map { Int($0.n) }
        }
    }

    /// Sorts `heads` (whose keys agree before `offset`) on the keys' eight bytes at `offset`,
    /// then each run of equal heads on the next eight; short runs and deep levels compare whole keys.
    private static func sort(_ heads: inout ArraySlice<(head: UInt64, n: Int32)>, offset: Int,
                             _ key: (Int) -> UnsafeRawBufferPointer) {
        guard heads.count > 16, offset < 64 else {
            heads.sort { ByteString.less(key(Int($0.n)), key(Int($1.n))) }
            return
        }
        heads.sort { $0.head < $1.head }
        var start = heads.startIndex
        while start < heads.endIndex {
            var end = start + 1
            while end < heads.endIndex && heads[end].head == heads[start].head { end += 1 }
            if end - start > 1 {
                for k in start..<end { heads[k].head = ByteString.head(UnsafeRawBufferPointer(rebasing: key(Int(heads[k].n)).dropFirst(offset + 8))) }
                sort(&heads[start..<end], offset: offset + 8, key)
            }
            start = end
        }
    }
}

/// Byte-string order (memcmp, then length): the order of LMDB's keys.
enum ByteString {
    static func less(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = min(a.count, b.count)
        let c = n == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, n)
        return c != 0 ? c < 0 : a.count < b.count
    }

    static func less(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in less(x, y) } }
    }

    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// The first eight bytes as a big-endian number (zero-padded): sorting on it sorts byte
    /// strings by their beginning; only equal heads need a full comparison.
    static func head(_ bytes: some Collection<UInt8>) -> UInt64 {
        var head: UInt64 = 0
        var n = 0
        for b in bytes.prefix(8) { head = head << 8 | UInt64(b); n += 1 }
        return n == 8 ? head : head << UInt64(8 * (8 - n))
    }
}
