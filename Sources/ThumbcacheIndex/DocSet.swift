/// A set of item numbers: a sorted array while small, a bitmap once dense.
///
/// Query evaluation intersects, unites and subtracts these. Lists read from postings arrive
/// sorted; unions of many lists (a date range is hundreds of buckets) go straight into a bitmap.
struct DocSet: Sendable {
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

    static func empty(universe: Int) -> DocSet { DocSet(sorted: [], universe: universe) }

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

    func contains(_ doc: UInt32) -> Bool {
        switch storage {
        case .sorted(let a):
            var lo = 0, hi = a.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if a[mid] < doc { lo = mid + 1 } else { hi = mid }
            }
            return lo < a.count && a[lo] == doc
        case .bitmap(let words):
            let i = Int(doc) >> 6
            return i < words.count && words[i] & (1 << UInt64(doc & 63)) != 0
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

    func intersection(_ other: DocSet) -> DocSet {
        switch (storage, other.storage) {
        case (.sorted(let a), .sorted(let b)):
            return DocSet(sorted: Self.intersect(a, b), universe: universe)
        case (.sorted(let a), .bitmap), (.bitmap, .sorted(let a)):
            let bits = isBitmap ? self : other
            return DocSet(sorted: a.filter { bits.contains($0) }, universe: universe)
        case (.bitmap(let x), .bitmap(let y)):
            return DocSet(bitmap: zip(x, y).map { $0 & $1 }, universe: universe).compacted()
        }
    }

    func union(_ other: DocSet) -> DocSet {
        if case .sorted(let a) = storage, case .sorted(let b) = other.storage,
           !Self.prefersBitmap(count: a.count + b.count, universe: universe) {
            return DocSet(sorted: Self.merge(a, b), universe: universe)
        }
        let x = bitmapWords(), y = other.bitmapWords()
        return DocSet(bitmap: zip(x, y).map { $0 | $1 }, universe: universe)
    }

    func subtracting(_ other: DocSet) -> DocSet {
        switch (storage, other.storage) {
        case (.sorted(let a), _):
            return DocSet(sorted: a.filter { !other.contains($0) }, universe: universe)
        case (.bitmap(let x), _):
            let y = other.bitmapWords()
            return DocSet(bitmap: zip(x, y).map { $0 & ~$1 }, universe: universe).compacted()
        }
    }

    /// Members for which `keep` is true.
    func filter(_ keep: (UInt32) throws -> Bool) rethrows -> DocSet {
        DocSet(sorted: try members.filter(keep), universe: universe)
    }

    private var isBitmap: Bool { if case .bitmap = storage { true } else { false } }

    /// A bitmap that became sparse turns back into an array.
    private func compacted() -> DocSet {
        guard case .bitmap = storage else { return self }
        let n = count
        return Self.prefersBitmap(count: n, universe: universe) ? self : DocSet(sorted: members, universe: universe)
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
/// when the count passes the density threshold.
struct DocSetBuilder {
    let universe: Int
    private var array: [UInt32] = []
    private var words: [UInt64]?
    private var sortedSoFar = true

    init(universe: Int) { self.universe = universe }

    @inline(__always)
    mutating func insert(_ doc: UInt32) {
        if words != nil {
            words![Int(doc) >> 6] |= 1 << UInt64(doc & 63)
            return
        }
        if let last = array.last, doc <= last { sortedSoFar = false }
        array.append(doc)
        if array.count > 4096 && DocSet.prefersBitmap(count: array.count, universe: universe) {
            var w = [UInt64](repeating: 0, count: (universe + 63) / 64)
            for d in array { w[Int(d) >> 6] |= 1 << UInt64(d & 63) }
            words = w
            array = []
        }
    }

    consuming func build() -> DocSet {
        if let words { return DocSet(bitmap: words, universe: universe) }
        if !sortedSoFar {
            array.sort()
            var out: [UInt32] = []
            out.reserveCapacity(array.count)
            for d in array where out.last != d { out.append(d) }
            array = out
        }
        return DocSet(sorted: array, universe: universe)
    }
}
