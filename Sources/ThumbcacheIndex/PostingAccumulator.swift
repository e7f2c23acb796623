import Glibc

/// The posting edits of one write transaction, gathered cheaply and applied per list at the end.
///
/// Bulk indexing makes tens of edits per item, so this is the hot path of ingest: each list's
/// key prefix is interned once (short prefixes are hashed inline, without a heap copy), and each
/// edit is one 8-byte append (list number · item number · add/remove). At the end a counting sort
/// groups the edits per list, keeping their order, and the lists are applied in key order.
struct PostingAccumulator {
    /// A key prefix of up to 48 bytes, stored inline.
    struct InlineKey: Hashable {
        var w: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        var count: Int

        init?(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count <= 48 else { return nil }
            count = bytes.count
            withUnsafeMutableBytes(of: &w) { $0.copyMemory(from: bytes) }
        }

        static func == (a: InlineKey, b: InlineKey) -> Bool {
            a.count == b.count && a.w.0 == b.w.0 && a.w.1 == b.w.1 && a.w.2 == b.w.2 && a.w.3 == b.w.3 && a.w.4 == b.w.4 && a.w.5 == b.w.5
        }

        func hash(into h: inout Hasher) {
            h.combine(w.0)
            if count > 8 { h.combine(w.1) }
            if count > 16 { h.combine(w.2) }
            if count > 24 { h.combine(w.3) }
            if count > 32 { h.combine(w.4) }
            if count > 40 { h.combine(w.5) }
            h.combine(count)
        }
    }

    private var inline: [InlineKey: Int32] = [:]
    /// Fast paths that skip hashing a key: existence lists by attribute, ASCII trigrams by their
    /// 21-bit code (a table per attribute), numeric buckets by attribute · bucket.
    private var existsLists: [Int32] = []  // allocated on first use: an empty accumulator is free
    private var trigramTables: [UInt16: Int] = [:]
    private var trigramLists: [[Int32]] = []
    private var numberLists: [UInt64: Int32] = [:]
    private var long: [[UInt8]: Int32] = [:]
    /// Key prefix of each list, by list number.
    private(set) var keys: [[UInt8]] = []
    /// list number << 32 | item number << 1 | (1 for add), in the order made.
    private var edits: [UInt64] = []

    /// The list number of a key prefix; lists the fast paths know get the same number here.
    private mutating func list(_ prefix: UnsafeRawBufferPointer) -> Int32 {
        if prefix.count >= 4 {
            let attribute = UInt16(prefix[1]) << 8 | UInt16(prefix[2])
            switch prefix[0] {
            case PostingKind.exists.rawValue where prefix.count == 4: return existsList(attribute)
            case PostingKind.trigram.rawValue where prefix.count == 7 && prefix[3] < 0x80 && prefix[4] < 0x80 && prefix[5] < 0x80:
                return trigramList(attribute, prefix[3], prefix[4], prefix[5])
            case PostingKind.number.rawValue where prefix.count == 7:
                return numberList(attribute, UInt32(prefix[3]) << 16 | UInt32(prefix[4]) << 8 | UInt32(prefix[5]))
            default: break
            }
        }
        if let key = InlineKey(prefix) {
            if let id = inline[key] { return id }
            let id = Int32(keys.count)
            inline[key] = id
            keys.append(Array(prefix))
            return id
        }
        let bytes = Array(prefix)
        if let id = long[bytes] { return id }
        let id = Int32(keys.count)
        long[bytes] = id
        keys.append(bytes)
        return id
    }

    private mutating func newList(_ key: [UInt8]) -> Int32 {
        keys.append(key)
        return Int32(keys.count - 1)
    }

    @inline(__always) private mutating func append(_ list: Int32, _ doc: UInt32) {
        edits.append(UInt64(UInt32(list)) << 32 | UInt64(doc) << 1 | 1)
    }

    mutating func addExists(_ attribute: UInt16, _ doc: UInt32) { append(existsList(attribute), doc) }

    /// An ASCII trigram (each byte < 0x80).
    mutating func addTrigram(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8, _ doc: UInt32) {
        append(trigramList(attribute, a, b, c), doc)
    }

    mutating func addNumber(_ attribute: UInt16, _ bucket: UInt32, _ doc: UInt32) { append(numberList(attribute, bucket), doc) }

    private mutating func existsList(_ attribute: UInt16) -> Int32 {
        if existsLists.isEmpty { existsLists = [Int32](repeating: -1, count: 1 << 16) }
        var l = existsLists[Int(attribute)]
        if l < 0 {
            l = newList(Postings.prefix(.exists, attribute, []))
            existsLists[Int(attribute)] = l
        }
        return l
    }

    private mutating func trigramList(_ attribute: UInt16, _ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int32 {
        let t: Int
        if let known = trigramTables[attribute] { t = known } else {
            t = trigramLists.count
            trigramLists.append([Int32](repeating: -1, count: 1 << 21))
            trigramTables[attribute] = t
        }
        let code = Int(a) << 14 | Int(b) << 7 | Int(c)
        var l = trigramLists[t][code]
        if l < 0 {
            l = newList(Postings.prefix(.trigram, attribute, [a, b, c]))
            trigramLists[t][code] = l
        }
        return l
    }

    private mutating func numberList(_ attribute: UInt16, _ bucket: UInt32) -> Int32 {
        let k = UInt64(attribute) << 32 | UInt64(bucket)
        if let known = numberLists[k] { return known }
        let l = newList(Postings.prefix(.number, attribute, NumericKey.term(bucket)))
        numberLists[k] = l
        return l
    }

    mutating func add(_ prefix: UnsafeRawBufferPointer, _ doc: UInt32) {
        edits.append(UInt64(UInt32(list(prefix))) << 32 | UInt64(doc) << 1 | 1)
    }

    mutating func remove(_ prefix: UnsafeRawBufferPointer, _ doc: UInt32) {
        edits.append(UInt64(UInt32(list(prefix))) << 32 | UInt64(doc) << 1)
    }

    /// Byte order of two keys (memcmp, then length).
    static func less(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        let c = a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, min(x.count, y.count)) } }
        return c != 0 ? c < 0 : a.count < b.count
    }

    /// Calls `body` with each list's key prefix and its edits (item << 1 | add) in the order
    /// made, lists in key order.
    func forEachList(_ body: ([UInt8], ArraySlice<UInt32>) throws -> Void) rethrows {
        guard !edits.isEmpty else { return }
        // Counting sort by list number: stable, so each list's edits keep their order.
        var starts = [Int](repeating: 0, count: keys.count + 1)
        for e in edits { starts[Int(e >> 32) + 1] += 1 }
        for i in 0..<keys.count { starts[i + 1] += starts[i] }
        var next = starts
        var sorted = [UInt32](repeating: 0, count: edits.count)
        for e in edits {
            let l = Int(e >> 32)
            sorted[next[l]] = UInt32(truncatingIfNeeded: e)
            next[l] += 1
        }
        let order = keys.indices.sorted { Self.less(keys[$0], keys[$1]) }
        for l in order where starts[l + 1] > starts[l] {
            try body(keys[l], sorted[starts[l]..<starts[l + 1]])
        }
    }
}
