/// A set of item numbers: a sorted array while small, a bitmap once dense.
///
/// Query evaluation intersects, unites and subtracts these. Lists read from postings arrive
/// sorted; unions of many lists (a date range is hundreds of buckets) go straight into a bitmap.
struct ItemSet: Sendable {
    enum Storage: Sendable {
        case sorted([UInt32])
        case bitmap([UInt64])
    }
    private(set) var storage: Storage
    /// One more than the largest item number that can occur.
    let universe: Int

    init(sorted: [UInt32], universe: Int) {
        storage = .sorted(sorted)
        self.universe = universe
    }

    init(bitmap: [UInt64], universe: Int) {
        storage = .bitmap(bitmap)
        self.universe = universe
    }

    static func empty(universe: Int) -> ItemSet { ItemSet(sorted: [], universe: universe) }

    /// Above this many members a set is kept as a bitmap (1/32 of the universe: where the bitmap
    /// becomes smaller than the array).
    static func prefersBitmap(count: Int, universe: Int) -> Bool { count > universe / 32 }

    var count: Int {
        switch storage {
        case .sorted(let a): a.count
        case .bitmap(let words): words.reduce(0) { $0 + $1.nonzeroBitCount }
        }
    }

    var isEmpty: Bool {
        switch storage {
        case .sorted(let a): a.isEmpty
        case .bitmap(let words): !words.contains { $0 != 0 }
        }
    }

    /// Members in increasing order.
    var members: [UInt32] {
        switch storage {
        case .sorted(let a): return a
        case .bitmap(let words):
            var out: [UInt32] = []
            out.reserveCapacity(count)
            for (i, var w) in words.enumerated() where w != 0 {
                while w != 0 {
                    out.append(UInt32(i * 64 + w.trailingZeroBitCount))
                    w &= w - 1
                }
            }
            return out
        }
    }

    /// The first `limit` members.
    func prefix(_ limit: Int) -> [UInt32] {
        switch storage {
        case .sorted(let a): return Array(a.prefix(limit))
        case .bitmap(let words):
            var out: [UInt32] = []
            for (i, var w) in words.enumerated() where w != 0 {
                while w != 0 {
                    if out.count >= limit { return out }
                    out.append(UInt32(i * 64 + w.trailingZeroBitCount))
                    w &= w - 1
                }
            }
            return out
        }
    }

    func contains(_ itemNumber: UInt32) -> Bool {
        switch storage {
        case .sorted(let a):
            var lo = 0, hi = a.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if a[mid] < itemNumber { lo = mid + 1 } else { hi = mid }
            }
            return lo < a.count && a[lo] == itemNumber
        case .bitmap(let words):
            let i = Int(itemNumber) >> 6
            return i < words.count && words[i] & (1 << UInt64(itemNumber & 63)) != 0
        }
    }

    private func bitmapWords() -> [UInt64] {
        switch storage {
        case .bitmap(let words): return words
        case .sorted(let a):
            var words = [UInt64](repeating: 0, count: (universe + 63) / 64)
            for d in a where Int(d) < universe { words[Int(d) >> 6] |= 1 << UInt64(d & 63) }
            return words
        }
    }

    func intersection(_ other: ItemSet) -> ItemSet {
        switch (storage, other.storage) {
        case (.sorted(let a), .sorted(let b)):
            return ItemSet(sorted: Self.intersect(a, b), universe: universe)
        case (.sorted(let a), .bitmap), (.bitmap, .sorted(let a)):
            let bits = isBitmap ? self : other
            return ItemSet(sorted: a.filter { bits.contains($0) }, universe: universe)
        case (.bitmap(let x), .bitmap(let y)):
            return ItemSet(bitmap: zip(x, y).map { $0 & $1 }, universe: universe).compacted()
        }
    }

    func union(_ other: ItemSet) -> ItemSet {
        if case .sorted(let a) = storage, case .sorted(let b) = other.storage,
           !Self.prefersBitmap(count: a.count + b.count, universe: universe) {
            return ItemSet(sorted: Self.merge(a, b), universe: universe)
        }
        let x = bitmapWords(), y = other.bitmapWords()
        return ItemSet(bitmap: zip(x, y).map { $0 | $1 }, universe: universe)
    }

    func subtracting(_ other: ItemSet) -> ItemSet {
        switch (storage, other.storage) {
        case (.sorted(let a), .sorted(let b)):
            return ItemSet(sorted: Self.difference(a, b), universe: universe)
        case (.sorted(let a), .bitmap):
            return ItemSet(sorted: a.filter { !other.contains($0) }, universe: universe)
        case (.bitmap(var x), .sorted(let b)):
            for d in b where Int(d) >> 6 < x.count { x[Int(d) >> 6] &= ~(1 << UInt64(d & 63)) }
            return ItemSet(bitmap: x, universe: universe).compacted()
        case (.bitmap(let x), .bitmap(let y)):
            return ItemSet(bitmap: zip(x, y).map { $0 & ~$1 }, universe: universe).compacted()
        }
    }

    private var isBitmap: Bool { if case .bitmap = storage { true } else { false } }

    /// A bitmap that became sparse turns back into an array.
    fileprivate func compacted() -> ItemSet {
        guard case .bitmap = storage else { return self }
        let n = count
        return Self.prefersBitmap(count: n, universe: universe) ? self : ItemSet(sorted: members, universe: universe)
    }

    /// Intersection of sorted arrays, galloping through the longer one.
    static func intersect(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        let (small, large) = a.count <= b.count ? (a, b) : (b, a)
        var out: [UInt32] = []
        out.reserveCapacity(small.count)
        var j = 0
        for x in small {
            // Gallop to the first element ≥ x.
            var step = 1
            var hi = j
            while hi < large.count && large[hi] < x { j = hi; hi += step; step *= 2 }
            hi = min(hi, large.count)
            var lo = j
            while lo < hi {
                let mid = (lo + hi) / 2
                if large[mid] < x { lo = mid + 1 } else { hi = mid }
            }
            j = lo
            if j == large.count { break }
            if large[j] == x { out.append(x); j += 1 }
        }
        return out
    }

    /// The members of sorted `a` that are not in sorted `b`.
    static func difference(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        guard !b.isEmpty else { return a }
        var out: [UInt32] = []
        out.reserveCapacity(a.count)
        var j = 0
        for x in a {
            while j < b.count && b[j] < x { j += 1 }
            if j == b.count || b[j] != x { out.append(x) }
        }
        return out
    }

    static func merge(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var out: [UInt32] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if a[i] < b[j] { out.append(a[i]); i += 1 }
            else if b[j] < a[i] { out.append(b[j]); j += 1 }
            else { out.append(a[i]); i += 1; j += 1 }
        }
        out.append(contentsOf: a[i...])
        out.append(contentsOf: b[j...])
        return out
    }
}

/// Collects item numbers from many posting lists into one set: an array, switching to a bitmap
/// when the count passes the density threshold and the items arrive out of order (many lists)
/// or in bitmap chunks; one list read in order stays an array up to 1/8 of the universe, as
/// setting and reading back bits would cost more than appending.
struct ItemSetBuilder {
    let universe: Int
    private var array: [UInt32] = []
    private var words: [UInt64]?
    private var sortedSoFar = true

    init(universe: Int) { self.universe = universe }

    @inline(__always)
    mutating func insert(_ itemNumber: UInt32) {
        if words != nil {
            if Int(itemNumber) < universe { words![Int(itemNumber) >> 6] |= 1 << UInt64(itemNumber & 63) }
            return
        }
        if let last = array.last, itemNumber <= last { sortedSoFar = false }
        array.append(itemNumber)
        if array.count > 4096 && shouldSwitch { switchToBitmap() }
    }

    private var shouldSwitch: Bool {
        ItemSet.prefersBitmap(count: array.count, universe: universe) && (!sortedSoFar || array.count > universe / 8)
    }

    /// Adds every item of a posting chunk (see ``Postings``), with one check of the storage per
    /// chunk rather than per item: a bitmap chunk is ORed into the bitmap a word at a time.
    /// Items past the universe (a damaged chunk) are dropped; a malformed chunk ends early.
    mutating func insert(chunk: UnsafeRawBufferPointer) {
        guard let h = Postings.header(chunk) else { return }
        if words == nil, h.bitmap, array.count + h.count > 4096, ItemSet.prefersBitmap(count: array.count + h.count, universe: universe) {
            switchToBitmap()
        }
        let limit = UInt32(clamping: universe)
        if words != nil {
            words!.withUnsafeMutableBufferPointer { w in
                if h.bitmap {
                    Self.or(chunk, from: h.body, first: h.first, into: w, limit: limit)
                } else {
                    Postings.decodeGaps(chunk, from: h.body, count: h.count) { itemNumber in
                        if itemNumber < limit { w[Int(itemNumber) >> 6] |= 1 << UInt64(itemNumber & 63) }
                    }
                }
            }
        } else {
            let before = array.count
            // Doubling: reserving just what each chunk needs would copy the array every chunk.
            if array.capacity < before + h.count { array.reserveCapacity(max(before + h.count, 2 * array.capacity)) }
            // Room made once, then filled through a pointer (appending checks the storage per item).
            array.append(contentsOf: repeatElement(0, count: h.count))
            let filled = array.withUnsafeMutableBufferPointer { p in
                var i = before
                let end = p.count
                if h.bitmap {
                    Postings.forEachBit(chunk, from: h.body, first: h.first) { itemNumber in
                        if i < end { p[i] = itemNumber; i += 1 }
                    }
                } else {
                    Postings.decodeGaps(chunk, from: h.body, count: h.count) { itemNumber in p[i] = itemNumber; i += 1 }
                }
                return i
            }
            if filled < array.count { array.removeLast(array.count - filled) }  // a malformed chunk
            if before > 0, before < array.count, array[before] <= array[before - 1] { sortedSoFar = false }
            if array.count > 4096 && shouldSwitch { switchToBitmap() }
        }
    }

    /// ORs the bits of a bitmap chunk into `words`, eight bytes at a time while they land wholly
    /// below `limit`.
    private static func or(_ chunk: UnsafeRawBufferPointer, from offset: Int, first: UInt32,
                           into words: UnsafeMutableBufferPointer<UInt64>, limit: UInt32) {
        var j = offset
        while j + 8 <= chunk.count {
            let position = UInt64(first) + UInt64(j - offset) * 8
            guard position + 64 <= UInt64(limit) else { break }
            let bits = UInt64(littleEndian: chunk.loadUnaligned(fromByteOffset: j, as: UInt64.self))
            if bits != 0 {
                let word = Int(position >> 6), shift = position & 63
                words[word] |= bits << shift
                if shift != 0 { words[word + 1] |= bits >> (64 - shift) }
            }
            j += 8
        }
        let rest = UnsafeRawBufferPointer(rebasing: chunk[j...])
        Postings.forEachBit(rest, from: 0, first: first &+ UInt32(j - offset) &* 8) { itemNumber in
            if itemNumber < limit { words[Int(itemNumber) >> 6] |= 1 << UInt64(itemNumber & 63) }
        }
    }

    private mutating func switchToBitmap() {
        var w = [UInt64](repeating: 0, count: (universe + 63) / 64)
        for d in array where Int(d) < universe { w[Int(d) >> 6] |= 1 << UInt64(d & 63) }
        words = w
        array = []
    }

    consuming func build() -> ItemSet {
        if let words { return ItemSet(bitmap: words, universe: universe) }
        if !sortedSoFar {
            // Many short runs (a range's buckets): setting bits and reading them back in order
            // beats sorting once the items are more than an eighth of the bitmap's words.
            if universe / 64 <= array.count * 8 {
                switchToBitmap()
                return ItemSet(bitmap: words!, universe: universe).compacted()
            }
            array.sort()
            var out: [UInt32] = []
            out.reserveCapacity(array.count)
            for d in array where out.last != d { out.append(d) }
            array = out
        }
        return ItemSet(sorted: array, universe: universe)
    }
}
