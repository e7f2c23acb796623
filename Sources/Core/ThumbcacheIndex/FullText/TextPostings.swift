import Foundation

/// The full-text postings: for each folded word, the documents that hold it, how often, and at
/// which word positions (Docs/FORMAT.md, "Full text").
///
/// Key:   word · 0x00 · first document (4 bytes, big-endian)
/// Value: count (varint), then per document: gap from the previous document (varint; the
///        first is 0, the key holds it), occurrences (varint), gaps between positions (varints;
///        the first is absolute)
///
/// A word's list is cut into blocks of at most ``blockBytes`` under their own keys, so a seek
/// skips whole blocks and a write rewrites only a word's last block (documents are numbered in
/// the order they are indexed, so new ones always append). Words never hold 0x00.
enum TextPostings {
    /// A block is closed once it would pass this size (half an LMDB page keeps values off overflow pages).
    static let blockBytes = 1000

    static func prefix(_ word: some Collection<UInt8>) -> [UInt8] {
        var key = Array(word)
        key.append(0)
        return key
    }

    static func key(_ word: some Collection<UInt8>, first: UInt32) -> [UInt8] {
        var key = prefix(word)
        Postings.appendBE(&key, first)
        return key
    }

    /// Calls `body` with each document of a block, its occurrence count, and where its positions
    /// start in `block` (read them with ``positions(_:at:count:)``); false if the block is malformed.
    @discardableResult
    static func forEach(_ block: UnsafeRawBufferPointer, first: UInt32,
                        _ body: (_ document: UInt32, _ count: Int, _ positionsAt: Int) -> Void) -> Bool {
        var offset = 0
        guard let n = Varint.read(block, &offset) else { return false }
        var document = first
        for _ in 0..<n {
            guard let gap = Varint.read(block, &offset), let tf = Varint.read(block, &offset),
                  tf > 0, tf <= UInt64(block.count) else { return false }
            document &+= UInt32(truncatingIfNeeded: gap)
            let at = offset
            guard skip(block, &offset, Int(tf)) else { return false }
            body(document, Int(tf), at)
        }
        return true
    }

    /// Moves `offset` past `count` varints; false if the bytes end first. Eight bytes at a time
    /// while all of them belong to those varints (fewer ends in them than are still wanted): a
    /// word in most documents has most of its bytes here.
    @inline(__always)
    static func skip(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, _ count: Int) -> Bool {
        var remaining = count
        var o = offset
        while remaining > 8, o + 8 <= bytes.count {
            let ends = (~bytes.loadUnaligned(fromByteOffset: o, as: UInt64.self) & 0x8080_8080_8080_8080).nonzeroBitCount
            guard ends < remaining else { break }
            remaining -= ends
            o += 8
        }
        while remaining > 0 {
            guard o < bytes.count else { return false }
            if bytes[o] < 0x80 { remaining -= 1 }
            o += 1
        }
        offset = o
        return true
    }

    /// The `count` positions stored at `offset` of `block`.
    static func positions(_ block: UnsafeRawBufferPointer, at offset: Int, count: Int) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(count)
        var o = offset
        var last: UInt32 = 0
        for i in 0..<count {
            guard let v = Varint.read(block, &o) else { break }
            last = i == 0 ? UInt32(truncatingIfNeeded: v) : last &+ UInt32(truncatingIfNeeded: v)
            result.append(last)
        }
        return result
    }

}

/// Document lengths in one byte each (BM25 needs them for every document a word is in): exact up
/// to 64 words, then steps of 2^(1/16) (4.4 %) up to about 250 000 words.
enum LengthNorm {
    static func encode(_ words: Int) -> UInt8 {
        guard words > 64 else { return UInt8(max(words, 1)) }
        let step = (log2(Double(words) / 64) * 16).rounded()
        return UInt8(min(255, 64 + Int(step)))
    }

    static func decode(_ byte: UInt8) -> Double { table[Int(byte)] }

    private static let table: [Double] = (0...255).map { (b: Int) -> Double in
        if b <= 64 { return Double(max(b, 1)) }
        let steps = Double(b - 64) / 16
        return 64 * exp2(steps)
    }
}
