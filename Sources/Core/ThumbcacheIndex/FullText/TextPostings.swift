import Glibc

/// The full-text postings: for each folded word, the documents that hold it, how often, and at
/// which word positions (Docs/FORMAT.md, "Full text", layout 2).
///
/// Key:   word · 0x00 · first document (4 bytes, big-endian)
/// Value: count (varint); per document: gap from the previous document (varint; the first is 0,
///        the key holds it) and occurrences (varint); then per document, in the same order, the
///        gaps between its positions (varints; the first is absolute)
///
/// Documents and frequencies come first, so a search that needs no positions (words joined by
/// AND, one word) reads a few bytes per document and never the positions after them. A word's
/// list is cut into blocks of at most ``blockBytes`` under their own keys, so a seek skips whole
/// blocks and a write rewrites only a word's last block (documents are numbered in the order they
/// are indexed, so new ones always append). Words never hold 0x00.
enum TextPostings {
    /// A block is closed once it would pass this size (half an LMDB page keeps values off overflow pages).
    static let blockBytes = 1000

    static func prefix(_ word: some Collection<UInt8>) -> [UInt8] {
        var key = Array(word)
        key.append(0)
        return key
    }

    /// Calls `body` with each document of a block and its occurrence count; returns where the
    /// positions start in `block`, nil if the block is malformed.
    @discardableResult
    static func forEachDocument(_ block: UnsafeRawBufferPointer, first: UInt32,
                                _ body: (_ document: UInt32, _ count: UInt32) -> Void) -> Int? {
        var offset = 0
        guard let n = Varint.read(block, &offset), n <= UInt64(block.count) else { return nil }
        var document = first
        for _ in 0..<n {
            guard let gap = Varint.read(block, &offset), let tf = Varint.read(block, &offset),
                  tf > 0, tf <= UInt64(block.count) else { return nil }
            document &+= UInt32(truncatingIfNeeded: gap)
            body(document, UInt32(tf))
        }
        return offset
    }

    /// Calls `body` with each document of a block, its occurrence count and the bytes of its
    /// positions (read them with ``positions(_:count:)``); false if the block is malformed.
    @discardableResult
    static func forEach(_ block: UnsafeRawBufferPointer, first: UInt32,
                        _ body: (_ document: UInt32, _ count: Int, _ positions: UnsafeRawBufferPointer) throws -> Void) rethrows -> Bool {
        var head = 0
        guard let n = Varint.read(block, &head), n <= UInt64(block.count) else { return false }
        // The positions start after the head's 2n varints; both are then read side by side.
        var at = head
        guard skip(block, &at, 2 * Int(n)) else { return false }
        var document = first
        for _ in 0..<n {
            guard let gap = Varint.read(block, &head), let tf = Varint.read(block, &head), tf > 0, tf <= UInt64(block.count) else { return false }
            document &+= UInt32(truncatingIfNeeded: gap)
            let start = at
            guard skip(block, &at, Int(tf)) else { return false }
            try body(document, Int(tf), UnsafeRawBufferPointer(rebasing: block[start..<at]))
        }
        return true
    }

    /// Moves `offset` past `count` varints; false if the bytes end first. Eight bytes at a time:
    /// the bytes ending a varint are those below 0x80; the word holding the last one wanted is
    /// cut after it by clearing the ends before it (most documents hold a word a few times, so
    /// their positions are skipped in one step).
    @inline(__always)
    static func skip(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int, _ count: Int) -> Bool {
        var remaining = count
        var o = offset
        // Long runs (a word hundreds of times in a document) 32 bytes a step: four words' ends
        // as 0 or 1 per byte, added (at most 4 a byte), then summed by one multiply.
        while remaining > 32, o + 32 <= bytes.count {
            var lows: UInt64 = 0
            for k in 0..<4 { lows &+= (~bytes.loadUnaligned(fromByteOffset: o + 8 * k, as: UInt64.self) & 0x8080_8080_8080_8080) >> 7 }
            let n = Int((lows &* 0x0101_0101_0101_0101) >> 56)
            guard n < remaining else { break }
            remaining -= n
            o += 32
        }
        while remaining > 0, o + 8 <= bytes.count {
            var ends = ~bytes.loadUnaligned(fromByteOffset: o, as: UInt64.self) & 0x8080_8080_8080_8080
            // How many, summed into the top byte by one multiply (baseline x86-64 has no popcount).
            let n = Int(((ends >> 7) &* 0x0101_0101_0101_0101) >> 56)
            if n < remaining {
                remaining -= n
                o += 8
                continue
            }
            for _ in 1..<remaining { ends &= ends &- 1 }
            o += ends.trailingZeroBitCount / 8 + 1
            remaining = 0
        }
        while remaining > 0 {
            guard o < bytes.count else { return false }
            if bytes[o] < 0x80 { remaining -= 1 }
            o += 1
        }
        offset = o
        return true
    }

    /// The `count` positions stored in `bytes` (gaps, the first absolute).
    static func positions(_ bytes: UnsafeRawBufferPointer, count: Int) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(count)
        var o = 0
        var last: UInt32 = 0
        for i in 0..<count {
            guard let v = Varint.read(bytes, &o) else { break }
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
