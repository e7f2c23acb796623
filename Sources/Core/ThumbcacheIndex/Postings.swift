/// Posting lists: for each (structure, attribute, term), the sorted numbers of the items that
/// have it, cut into chunks of at most ``chunkBytes`` bytes stored under their own LMDB keys.
///
/// Key:   kind (1 byte) · attribute (2 bytes, big-endian) · term · 0x00 · first item (4 bytes, BE)
/// Value, one of two forms (the writer picks, per run, the one that holds more items):
///   gaps:   count (varint) · first item (varint) · gaps to the next item (varints)
///   bitmap: 0x00 · count (varint) · first item (varint) · bits, where bit b of byte j set means
///           item first + 8j + b (a count is never 0, so the first byte tells the forms apart)
///
/// Dense lists (an attribute most items have, a common type) take the bitmap form: one bit per
/// item number rather than a byte per item, and a query ORs whole words into its set.
///
/// A write reads and rewrites only the chunk an item falls into (appends go to the last one),
/// never a whole list; chunks stay below half an LMDB page so no value spills to overflow pages.
/// Terms never contain 0x00 (numeric bucket terms have a fixed length), so a term's chunks are
/// contiguous and a prefix scan over terms stays inside one attribute.
enum PostingKind: UInt8, Sendable {
    /// The items that have the attribute at all (attribute 0: every item).
    case exists = 0x65  // e
    /// A whole folded value.
    case value = 0x76  // v
    /// A value whose folding changed it: folded · 0x01 · as written. With ``value`` it answers
    /// case- and diacritic-sensitive equality without reading items.
    case exactValue = 0x56  // V
    /// A folded word of a value.
    case word = 0x77  // w
    /// A folded trigram of a value.
    case trigram = 0x74  // t
    /// An order-preserving bucket of a number or date.
    case number = 0x6E  // n
    /// An ancestor directory of a file's path.
    case directory = 0x64  // d
}

enum Postings {
    /// Upper bound of a chunk's encoded size.
    static let chunkBytes = 1000

    /// The key prefix shared by every chunk of one term.
    static func prefix(_ kind: PostingKind, _ attribute: UInt16, _ term: [UInt8]) -> [UInt8] {
        var key: [UInt8] = [kind.rawValue, UInt8(attribute >> 8), UInt8(attribute & 0xFF)]
        key.reserveCapacity(key.count + term.count + 5)
        key.append(contentsOf: term)
        key.append(0)
        return key
    }

    /// The key prefix of every term of one kind and attribute.
    static func attributePrefix(_ kind: PostingKind, _ attribute: UInt16) -> [UInt8] {
        [kind.rawValue, UInt8(attribute >> 8), UInt8(attribute & 0xFF)]
    }

    static func appendBE(_ bytes: inout [UInt8], _ v: UInt32) {
        bytes.append(UInt8(v >> 24)); bytes.append(UInt8((v >> 16) & 0xFF))
        bytes.append(UInt8((v >> 8) & 0xFF)); bytes.append(UInt8(v & 0xFF))
    }

    static func readBE(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    // MARK: Chunks

    /// The first byte of a chunk in the bitmap form.
    static let bitmapMark: UInt8 = 0

    /// Bits a bitmap chunk can hold: what is left of ``chunkBytes`` after the mark, a count and
    /// a first item of at most 5 bytes each.
    static let bitmapSpan: UInt32 = UInt32(chunkBytes - 11) * 8

    /// A chunk's form, item count and first item, and where its gaps or bits start; nil for a
    /// malformed chunk (a count of 0 or more items than the chunk has bytes or bits).
    @inline(__always)
    static func header(_ chunk: UnsafeRawBufferPointer) -> (bitmap: Bool, count: Int, first: UInt32, body: Int)? {
        var offset = 0
        let bitmap = chunk.first == bitmapMark
        if bitmap { offset = 1 }
        guard let n = Varint.read(chunk, &offset), n > 0 else { return nil }
        if bitmap {
            guard let first = Varint.read(chunk, &offset), first <= UInt64(UInt32.max),
                  n <= UInt64(chunk.count - offset) * 8 else { return nil }
            return (true, Int(n), UInt32(first), offset)
        }
        guard n <= UInt64(chunk.count) else { return nil }
        return (false, Int(n), 0, offset)
    }

    /// Number of items in a chunk, read from its first bytes.
    static func count(_ chunk: UnsafeRawBufferPointer) -> Int { header(chunk)?.count ?? 0 }

    /// Calls `body` with each item of a chunk, in order. Stops early at a malformed chunk.
    @inline(__always)
    static func forEach(_ chunk: UnsafeRawBufferPointer, _ body: (UInt32) -> Void) {
        guard let h = header(chunk) else { return }
        if h.bitmap {
            forEachBit(chunk, from: h.body, first: h.first, body)
        } else {
            decodeGaps(chunk, from: h.body, count: h.count, body)
        }
    }

    /// The items of a gaps-form chunk whose `count` gaps start at `offset`; one-byte gaps (the
    /// usual case in long lists) take a short path.
    @inline(__always)
    static func decodeGaps(_ chunk: UnsafeRawBufferPointer, from offset: Int, count: Int, _ body: (UInt32) -> Void) {
        var offset = offset
        var itemNumber: UInt32 = 0
        for i in 0..<count {
            let gap: UInt32
            if offset < chunk.count, chunk[offset] < 0x80 {
                gap = UInt32(chunk[offset])
                offset += 1
            } else {
                guard let g = Varint.read(chunk, &offset) else { return }
                gap = UInt32(truncatingIfNeeded: g)
            }
            itemNumber = i == 0 ? gap : itemNumber &+ gap
            body(itemNumber)
        }
    }

    /// The items of a bitmap-form chunk whose bits start at `offset`.
    @inline(__always)
    static func forEachBit(_ chunk: UnsafeRawBufferPointer, from offset: Int, first: UInt32, _ body: (UInt32) -> Void) {
        var j = offset
        while j < chunk.count {
            var byte = chunk[j]
            let base = first &+ UInt32(j - offset) &* 8
            while byte != 0 {
                body(base &+ UInt32(byte.trailingZeroBitCount))
                byte &= byte &- 1
            }
            j += 1
        }
    }

    /// Appends `itemNumbers` (ascending, non-empty) to `out` in the gaps form.
    static func encodeGaps(_ itemNumbers: ArraySlice<UInt32>, into out: inout [UInt8]) {
        Varint.append(&out, UInt64(itemNumbers.count))
        var previous: UInt32?
        for d in itemNumbers {
            Varint.append(&out, UInt64(previous.map { d - $0 } ?? d))
            previous = d
        }
    }

    /// Appends `itemNumbers` (ascending, non-empty, spanning less than ``bitmapSpan``) to `out` in the
    /// bitmap form.
    static func encodeBitmap(_ itemNumbers: ArraySlice<UInt32>, into out: inout [UInt8]) {
        let first = itemNumbers.first!
        out.append(bitmapMark)
        Varint.append(&out, UInt64(itemNumbers.count))
        Varint.append(&out, UInt64(first))
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: Int(itemNumbers.last! - first) / 8 + 1))
        for d in itemNumbers {
            let bit = Int(d - first)
            out[start + (bit >> 3)] |= 1 << UInt8(bit & 7)
        }
    }
}

/// LEB128 variable-length integers.
enum Varint {
    @inline(__always)
    static func append(_ out: inout [UInt8], _ value: UInt64) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inline(__always)
    static func size(_ value: UInt64) -> Int {
        var v = value, n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    @inline(__always)
    static func read(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            let b = bytes[offset]
            offset += 1
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}

/// Order-preserving numeric keys: numbers and dates as big-endian bytes that sort like the values.
enum NumericKey {
    /// The 64-bit key of `value`: unsigned comparison of keys is numeric comparison of values.
    static func key(_ value: Double) -> UInt64 {
        let v = value == 0 ? 0.0 : value  // -0 and +0 alike
        let bits = v.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    static func value(_ key: UInt64) -> Double {
        let bits = key & (1 << 63) != 0 ? key & ~(1 << 63) : ~key
        return Double(bitPattern: bits)
    }

    /// The bucket as its 3-byte term.
    static func term(_ bucket: UInt32) -> [UInt8] {
        [UInt8((bucket >> 16) & 0xFF), UInt8((bucket >> 8) & 0xFF), UInt8(bucket & 0xFF)]
    }

    static func bucket(term: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(term[0]) << 16 | UInt32(term[1]) << 8 | UInt32(term[2])
    }
}

/// How finely an attribute's numbers are bucketed: a bucket keeps the sign, the exponent and
/// the top bits of the mantissa of the value's ``NumericKey``, so each spans a fixed relative
/// range. Fewer buckets mean fewer lists for a batch to touch; finer ones, fewer items to check
/// at a range's ends.
struct NumericBuckets: Sendable, Hashable {
    /// Bits dropped from the 64-bit key.
    let shift: UInt64

    /// 1/4096 relative ranges (a 2024 date: about 3 days; whole numbers below 4096: one each).
    static let fine = NumericBuckets(shift: 40)
    /// 1/256 relative ranges, for values that spread over many octaves and are nearly unique per
    /// item, such as file sizes: a batch of new files then touches far fewer lists.
    static let coarse = NumericBuckets(shift: 44)

    func bucket(_ value: Double) -> UInt32 { UInt32(NumericKey.key(value) >> shift) }

    /// The smallest and largest value a bucket can hold.
    func range(_ bucket: UInt32) -> ClosedRange<Double> {
        let low = NumericKey.value(UInt64(bucket) << shift)
        let high = NumericKey.value(UInt64(bucket) << shift | ((1 << shift) - 1))
        return low <= high ? low...high : high...low
    }
}
