import Foundation
import ThumbcacheLMDB
import ThumbcacheSync

/// How to run a search.
public struct SearchOptions: Sendable {
    /// Only items at or under these directories (files, and app items with a path).
    public var onlyIn: [String]
    /// At most this many results are returned (all are counted).
    public var limit: Int?
    /// Attributes to return with each result; nil for none.
    public var attributes: [String]?
    /// Parses the query; its `now` anchors `$time…`.
    public var parser: QueryParser

    public init(onlyIn: [String] = [], limit: Int? = nil, attributes: [String]? = nil, parser: QueryParser = QueryParser()) {
        self.onlyIn = onlyIn
        self.limit = limit
        self.attributes = attributes
        self.parser = parser
    }
}

/// The answer to a search.
public struct SearchResults: Sendable {
    /// How many items match (results may hold fewer, see ``SearchOptions/limit``).
    public var count: Int
    public var results: [SearchResult]
    /// Attribute names in the query that no item has ever had (a typo?).
    public var unknownAttributes: [String]
}

/// A query compiled against the index's attributes.
indirect enum QueryPlan: Sendable {
    case and([QueryPlan])
    case or([QueryPlan])
    case not(QueryPlan)
    case nothing
    case exists(UInt16)
    case string(AttributeInfo, WildcardPattern)
    case stringOrder(AttributeInfo, ComparisonOperator, WildcardPattern)
    case numeric(AttributeInfo, NumericInterval)
    case path(WildcardPattern)
    case text(String)
    case scope([String])
}

/// An interval of numbers, each end open or closed.
struct NumericInterval: Hashable {
    var low = -Double.infinity, lowInclusive = true
    var high = Double.infinity, highInclusive = true

    func contains(_ v: Double) -> Bool {
        (lowInclusive ? v >= low : v > low) && (highInclusive ? v <= high : v < high)
    }

    func contains(_ r: ClosedRange<Double>) -> Bool { contains(r.lowerBound) && contains(r.upperBound) }

    func overlaps(_ r: ClosedRange<Double>) -> Bool {
        !(r.upperBound < low || (r.upperBound == low && !lowInclusive) || r.lowerBound > high || (r.lowerBound == high && !highInclusive))
    }
}

/// The items a plan may match: every match is in `set`; those in `unsure` are checked against
/// their records before they are answered.
struct Candidates {
    enum Unsure {
        /// Every member matches.
        case none
        /// These members (a subset of the set, or more) may not match.
        case some(DocSet)
        /// Any member may not match.
        case all
    }

    var set: DocSet
    var unsure: Unsure

    init(_ set: DocSet, unsure: Unsure = .none) {
        self.set = set
        self.unsure = unsure
    }

    init(_ set: DocSet, exact: Bool) { self.init(set, unsure: exact ? .none : .all) }

    init(_ pair: (DocSet, Bool)) { self.init(pair.0, exact: pair.1) }

    /// Members of both; a member is unsure if either side was unsure of it.
    mutating func formIntersection(_ other: Candidates) {
        set = set.intersection(other.set)
        unsure = Self.either(unsure, other.unsure)
    }

    /// Members of either; a member is unsure if a side that has it was unsure of it (counted
    /// generously: unsure on one side, sure on the other, still counts as unsure).
    mutating func formUnion(_ other: Candidates) {
        set = set.union(other.set)
        unsure = Self.either(unsure, other.unsure)
    }

    private static func either(_ a: Unsure, _ b: Unsure) -> Unsure {
        switch (a, b) {
        case (.all, _), (_, .all): .all
        case (.none, let x), (let x, .none): x
        case (.some(let x), .some(let y)): .some(x.union(y))
        }
    }
}

extension MetadataIndex {
    /// Runs `query` (Docs/QUERY.md). Throws ``QueryError`` for a query that cannot run (with the
    /// position), ``IndexError`` if the index cannot be read.
    public func search(_ query: String, options: SearchOptions = SearchOptions()) throws -> SearchResults {
        let expression = try options.parser.parse(query)
        return try search(expression, query: query, options: options)
    }

    public func search(_ expression: QueryExpression, query: String = "", options: SearchOptions = SearchOptions()) throws -> SearchResults {
        do {
            return try environment.read { txn in
                var unknown: [String] = []
                let (set, _) = try run(expression, query: query, onlyIn: options.onlyIn, unknown: &unknown, txn)
                var results: [SearchResult] = []
                for doc in set.prefix(options.limit ?? Int.max) {
                    guard let r = try record(doc, txn) else { continue }
                    results.append(try result(doc, r, attributes: options.attributes ?? [], txn))
                }
                return SearchResults(count: set.count, results: results, unknownAttributes: unknown)
            }
        } catch let error as QueryError {
            throw error
        } catch {
            throw IndexError.wrapping(error, path: directory)
        }
    }

    /// The numbers of the items matching `expression`, in order (for benchmarks and tools).
    public func matchingItemNumbers(_ expression: QueryExpression, onlyIn: [String] = []) throws -> [UInt32] {
        try environment.read { txn in
            var unknown: [String] = []
            return try run(expression, query: "", onlyIn: onlyIn, unknown: &unknown, txn).0.members
        }
    }

    func run(_ expression: QueryExpression, query: String, onlyIn: [String], unknown: inout [String],
             _ txn: borrowing Transaction) throws -> (DocSet, QueryPlan) {
        var plan = try compile(expression, query: query, unknown: &unknown, txn)
        if !onlyIn.isEmpty { plan = .and([plan, .scope(onlyIn.map { $0.count > 1 && $0.hasSuffix("/") ? String($0.dropLast()) : $0 })]) }
        let u = try universe(txn)
        return (try exact(plan, universe: u, txn), plan)
    }

    // MARK: Compiling

    func compile(_ e: QueryExpression, query: String, unknown: inout [String], _ txn: borrowing Transaction) throws -> QueryPlan {
        func attribute(_ name: String, _ position: Int) throws -> AttributeInfo? {
            if let info = catalog.info(named: name) { return info }
            try catalog.reload(txn, meta: meta)
            if let info = catalog.info(named: name) { return info }
            if !unknown.contains(name) { unknown.append(name) }
            return nil
        }
        func number(_ v: QueryValue, _ info: AttributeInfo, _ position: Int) throws -> Double {
            switch v {
            case .number(let n): return n
            case .date(let d) where info.type == .date: return d
            case .date: throw QueryError(message: "\(info.name) holds numbers, not dates", position: position, query: query)
            case .string:
                let hint = info.type == .date ? "$time.iso(…) or another $time value" : "a number"
                throw QueryError(message: "\(info.name) holds \(info.type)s: compare it with \(hint), not a string", position: position, query: query)
            }
        }
        switch e {
        case .and(let list): return .and(try list.map { try compile($0, query: query, unknown: &unknown, txn) })
        case .or(let list): return .or(try list.map { try compile($0, query: query, unknown: &unknown, txn) })
        case .not(let inner): return .not(try compile(inner, query: query, unknown: &unknown, txn))
        case .text(let word, _): return .text(word)
        case .inRange(let name, let low, let high, let position):
            guard let info = try attribute(name, position) else { return .nothing }
            guard !info.type.isText else {
                throw QueryError(message: "InRange needs a number or date attribute; \(name) holds strings", position: position, query: query)
            }
            return .numeric(info, NumericInterval(low: try number(low, info, position), high: try number(high, info, position)))
        case .comparison(let name, let op, let value, let position):
            if name == MDItem.path {
                guard case .string(let s, let m) = value else {
                    throw QueryError(message: "\(name) holds strings: quote the value", position: position, query: query)
                }
                let leaf = QueryPlan.path(Self.pattern(s, m))
                switch op {
                case .equal: return leaf
                case .notEqual: return .and([.exists(Schema.pathID), .not(leaf)])
                default:
                    throw QueryError(message: "\(name) compares with == and != only", position: position, query: query)
                }
            }
            guard let info = try attribute(name, position) else { return .nothing }
            if info.type.isText {
                guard case .string(let s, let m) = value else {
                    throw QueryError(message: "\(name) holds strings: quote the value", position: position, query: query)
                }
                let pattern = Self.pattern(s, m)
                switch op {
                case .equal: return .string(info, pattern)
                case .notEqual: return .and([.exists(info.id), .not(.string(info, pattern))])
                default: return .stringOrder(info, op, pattern)
                }
            }
            let n = try number(value, info, position)
            var interval = NumericInterval()
            switch op {
            case .equal, .notEqual: interval = NumericInterval(low: n, high: n)
            case .less: interval.high = n; interval.highInclusive = false
            case .lessOrEqual: interval.high = n
            case .greater: interval.low = n; interval.lowInclusive = false
            case .greaterOrEqual: interval.low = n
            }
            return op == .notEqual ? .and([.exists(info.id), .not(.numeric(info, interval))]) : .numeric(info, interval)
        }
    }

    static func pattern(_ s: String, _ m: StringModifiers) -> WildcardPattern {
        WildcardPattern(s, ignoresCase: m.contains(.caseInsensitive), ignoresDiacritics: m.contains(.diacriticInsensitive),
                        wordBased: m.contains(.wordBased))
    }

    // MARK: Evaluating

    /// Estimates stop counting here (counting reads only each chunk's first byte, so this is generous).
    static let estimateCap = 4_000_000
    /// Checking one item against a predicate costs about this many decoded postings.
    static let verifyCost = 100

    func exact(_ plan: QueryPlan, universe: Int, _ txn: borrowing Transaction) throws -> DocSet {
        let c = try candidates(plan, universe: universe, txn)
        switch c.unsure {
        case .none: return c.set
        case .all: return try verify(c.set, plan, txn)
        case .some(let unsure):
            // Only the unsure members still in the set are read (unions keep more).
            return c.set.subtracting(try verify(unsure.intersection(c.set), plan, txn, keeping: false))
        }
    }

    /// Sets at least this large are checked on two threads: reading records is most of a
    /// wildcard query's time, and a hand-off costs about as much as checking a few dozen.
    static let parallelVerifyCount = 2048

    /// The members of `set` whose records match `plan` (or, `keeping: false`, those that do not).
    /// A large set is checked in two halves, the second by a helper in a read transaction of its
    /// own, used only if it sees the same snapshot as `txn` (else this thread checks it too).
    func verify(_ set: DocSet, _ plan: QueryPlan, _ txn: borrowing Transaction, keeping: Bool = true) throws -> DocSet {
        let members = set.members
        guard members.count >= Self.parallelVerifyCount else {
            return DocSet(sorted: try check(members[...], plan, keeping, txn), universe: set.universe)
        }
        let half = members.count / 2
        let snapshot = txn.snapshot
        let helper = HelperWork { [self] () throws -> [UInt32]? in
            try environment.read { own in
                own.snapshot == snapshot ? try check(members[half...], plan, keeping, own) : nil
            }
        }
        let first: [UInt32]
        do {
            first = try check(members[..<half], plan, keeping, txn)
        } catch {
            _ = try? helper.result()
            throw error
        }
        let second = try helper.result() ?? check(members[half...], plan, keeping, txn)
        return DocSet(sorted: first + second, universe: set.universe)
    }

    private func check(_ docs: ArraySlice<UInt32>, _ plan: QueryPlan, _ keeping: Bool, _ txn: borrowing Transaction) throws -> [UInt32] {
        try docs.filter { doc in
            guard let bytes = try txn.get(items, key: Self.docBytes(doc)), let view = RecordView(bytes) else { return !keeping }
            return matches(plan, view) == keeping
        }
    }

    func candidates(_ plan: QueryPlan, universe: Int, _ txn: borrowing Transaction) throws -> Candidates {
        switch plan {
        case .nothing: return Candidates(.empty(universe: universe))
        case .exists(let id): return Candidates(try list(Postings.prefix(.exists, id, []), universe, txn))
        case .scope(let dirs):
            var set = DocSet.empty(universe: universe)
            var isExact = true
            for dir in dirs {
                let (s, exact) = try itemsUnder(dir, universe, txn)
                set = set.union(s)
                isExact = isExact && exact
            }
            return Candidates(set, exact: isExact)
        case .or(let list):
            var result = Candidates(.empty(universe: universe))
            for p in list { result.formUnion(try candidates(p, universe: universe, txn)) }
            return result
        case .not(let inner):
            let all = try list(Postings.prefix(.exists, Schema.allItemsID, []), universe, txn)
            return Candidates(all.subtracting(try exact(inner, universe: universe, txn)))
        case .and(let list): return try conjunction(list, universe: universe, txn)
        case .numeric(let info, let interval): return try numeric(info, interval, universe, txn)
        case .string(let info, let pattern): return Candidates(try stringCandidates(info, pattern, universe, txn))
        case .stringOrder(let info, _, _): return Candidates(try list(Postings.prefix(.exists, info.id, []), universe, txn), exact: false)
        case .path(let pattern): return Candidates(try pathCandidates(pattern, universe, txn))
        case .text(let word): return Candidates(try textCandidates(word, universe, txn))
        }
    }

    /// Conjunctions start from the most selective part; a part much larger than what is left is
    /// checked on the remaining items instead of being read. Items a part is unsure of are
    /// checked only if they survive the other parts.
    func conjunction(_ parts: [QueryPlan], universe: Int, _ txn: borrowing Transaction) throws -> Candidates {
        var positive: [(QueryPlan, Int)] = []
        var negative: [(QueryPlan, Int)] = []
        for p in parts {
            if case .not(let inner) = p { negative.append((inner, try estimate(inner, universe, txn))) }
            else { positive.append((p, try estimate(p, universe, txn))) }
        }
        positive.sort { $0.1 < $1.1 }
        var result: Candidates
        if let first = positive.first {
            result = try candidates(first.0, universe: universe, txn)
        } else {
            result = Candidates(try list(Postings.prefix(.exists, Schema.allItemsID, []), universe, txn))
        }
        for (p, est) in positive.dropFirst() {
            if result.set.isEmpty { return result }
            if est > result.set.count * Self.verifyCost { result.unsure = .all; continue }
            result.formIntersection(try candidates(p, universe: universe, txn))
        }
        for (p, est) in negative {
            if result.set.isEmpty { return result }
            if est > result.set.count * Self.verifyCost { result.unsure = .all; continue }
            result.set = result.set.subtracting(try exact(p, universe: universe, txn))
        }
        return result
    }

    /// About how many items `plan` reads from the index (capped at ``estimateCap``).
    func estimate(_ plan: QueryPlan, _ universe: Int, _ txn: borrowing Transaction) throws -> Int {
        switch plan {
        case .nothing: return 0
        case .exists(let id): return try count(Postings.prefix(.exists, id, []), txn)
        case .and(let list): return try list.map { try estimate($0, universe, txn) }.min() ?? universe
        case .or(let list): return try list.reduce(0) { $0 + (try estimate($1, universe, txn)) }
        case .not: return universe
        case .numeric(let info, let interval):
            var n = 0
            try numericBuckets(info, interval, txn) { _, chunk in
                n += Postings.count(chunk)
                return n < Self.estimateCap
            }
            return n
        case .string(let info, let pattern):
            if let literal = pattern.literalText, !pattern.wordBased, info.policy.contains(.values) {
                return try count(Postings.prefix(.value, info.id, TextFolding.term(TextFolding.fold(literal)).bytes), txn)
            }
            if info.policy.contains(.trigrams), !pattern.wordBased {
                let tris = pattern.requiredTrigrams()
                if !tris.isEmpty { return try tris.map { try count(Postings.prefix(.trigram, info.id, $0), txn) }.min() ?? 0 }
            }
            return Self.estimateCap
        case .scope, .stringOrder, .path, .text: return Self.estimateCap
        }
    }

    // MARK: Leaves

    /// Items in one posting list, up to the cap.
    func count(_ prefix: [UInt8], _ txn: borrowing Transaction) throws -> Int {
        var n = 0
        try prefix.withUnsafeBytes { start in
            try txn.forEach(postings, from: start) { key, value in
                guard key.count == prefix.count + 4, key.starts(with: prefix) else { return false }
                n += Postings.count(value)
                return n < Self.estimateCap
            }
        }
        return n
    }

    func list(_ prefix: [UInt8], _ universe: Int, _ txn: borrowing Transaction) throws -> DocSet {
        var builder = DocSetBuilder(universe: universe)
        try collect(prefix, into: &builder, txn)
        return builder.build()
    }

    func collect(_ prefix: [UInt8], into builder: inout DocSetBuilder, _ txn: borrowing Transaction) throws {
        try prefix.withUnsafeBytes { start in
            try txn.forEach(postings, from: start) { key, value in
                guard key.count == prefix.count + 4, key.starts(with: prefix) else { return false }
                builder.insert(chunk: value)
                return true
            }
        }
    }

    /// The items at any depth under `directory` (absolute, no trailing "/"), and whether exactly
    /// those: its directory list, which holds the items of its subdirectories, and its own files
    /// from `ids` (see ``listsOwnDirectory(_:pathBytes:)``). "/" has no list of its own: every
    /// item with a path is under it. A directory longer than a term shares its cut term's list.
    func itemsUnder(_ directory: String, _ universe: Int, _ txn: borrowing Transaction) throws -> (DocSet, Bool) {
        if directory == "/" { return (try list(Postings.prefix(.exists, Schema.pathID, []), universe, txn), true) }
        let term = TextFolding.term(directory)
        var builder = DocSetBuilder(universe: universe)
        try collect(Postings.prefix(.directory, Schema.pathID, term.bytes), into: &builder, txn)
        try forEachFile(directlyIn: directory, txn) { builder.insert($0) }
        return (builder.build(), !term.truncated)
    }

    /// Calls `body` with the item number of each file directly in `directory` that has a plain
    /// `ids` key (its path). `ids` is in path order, so a directory's files are one range; each
    /// subdirectory met in it is skipped with one seek, past every key under it.
    func forEachFile(directlyIn directory: String, _ txn: borrowing Transaction, _ body: (UInt32) -> Void) throws {
        let slash = UInt8(ascii: "/")
        let prefix = [Namespace.file.rawValue] + Array(directory.utf8) + [slash]
        guard prefix.count <= 1 + Self.maxPlainKeyBytes else { return }  // its files have hashed keys
        try txn.withCursor(ids) { c in
            var entry = try c.seek(atLeast: prefix)
            while let e = entry, e.key.starts(with: prefix) {
                let plain = e.key.count > 1 + Self.maxPlainKeyBytes ? 1 + Self.hashedKeyTextBytes : e.key.count
                if let next = e.key[prefix.count..<plain].firstIndex(of: slash) {
                    // A subdirectory: on to the first key after "sub/…" ("sub0", as "0" follows "/").
                    entry = try c.seek(atLeast: Array(e.key[..<next]) + [slash + 1])
                    continue
                }
                if plain == e.key.count, let doc = Self.doc(e.value) { body(doc) }
                entry = try c.next()
            }
        }
    }

    /// Visits the chunks of every term of `kind`/`attribute` whose term starts with `termPrefix`,
    /// in term order; `body` gets the term and the chunk, and returns false to stop.
    func scanTerms(_ kind: PostingKind, _ attribute: UInt16, startingWith termPrefix: [UInt8], _ txn: borrowing Transaction,
                   _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let start = Postings.attributePrefix(kind, attribute) + termPrefix
        try start.withUnsafeBytes { s in
            try txn.forEach(postings, from: s) { key, value in
                guard key.count >= start.count + 5, key.starts(with: start) else { return false }
                return try body(UnsafeRawBufferPointer(rebasing: key[3..<key.count - 5]), value)
            }
        }
    }

    /// Candidates for `attribute == pattern` from whole-value or word terms (`kind`).
    func termCandidates(_ kind: PostingKind, _ info: AttributeInfo, _ pattern: WildcardPattern, _ universe: Int,
                        _ txn: borrowing Transaction) throws -> (DocSet, Bool) {
        let foldExact = pattern.matchesFoldedTermsExactly
        if let literal = pattern.literalText {
            let term = TextFolding.term(TextFolding.fold(literal))
            let folded = try list(Postings.prefix(kind, info.id, term.bytes), universe, txn)
            if kind == .value, !pattern.ignoresCase, !pattern.ignoresDiacritics, literal.utf8.count <= 112, !term.truncated {
                // Case and accents kept: the exact-value lists tell which folded matches are written so.
                if !term.bytes.elementsEqual(literal.utf8) {
                    return (try list(Postings.prefix(.exactValue, info.id, TextFolding.exactTerm(folded: term.bytes, raw: literal)), universe, txn), true)
                }
                // Written as folded: the folded matches minus those written otherwise, plus lists
                // that hold both spellings (marked with an exact term of their own).
                var variants = DocSetBuilder(universe: universe)
                try scanTerms(.exactValue, info.id, startingWith: term.bytes + [1], txn) { _, chunk in
                    variants.insert(chunk: chunk)
                    return true
                }
                let both = try list(Postings.prefix(.exactValue, info.id, TextFolding.exactTerm(folded: term.bytes, raw: literal)), universe, txn)
                return (folded.subtracting(variants.build()).union(both), true)
            }
            return (folded, foldExact && !term.truncated)
        }
        let prefix = TextFolding.term(TextFolding.fold(pattern.prefix)).bytes
        var builder = DocSetBuilder(universe: universe)
        var lastTerm: [UInt8] = []
        var lastMatched = false
        let everyTerm = pattern.isPrefixPattern
        try scanTerms(kind, info.id, startingWith: prefix, txn) { term, chunk in
            if !term.elementsEqual(lastTerm) {
                lastTerm = Array(term)
                lastMatched = everyTerm || pattern.matchesFoldedTerm(String(decoding: term, as: UTF8.self))
            }
            if lastMatched { builder.insert(chunk: chunk) }
            return true
        }
        return (builder.build(), foldExact)
    }

    func stringCandidates(_ info: AttributeInfo, _ pattern: WildcardPattern, _ universe: Int, _ txn: borrowing Transaction) throws -> (DocSet, Bool) {
        if pattern.wordBased, info.policy.contains(.words) { return try termCandidates(.word, info, pattern, universe, txn) }
        if !pattern.wordBased, info.policy.contains(.values) { return try termCandidates(.value, info, pattern, universe, txn) }
        if !pattern.wordBased, info.policy.contains(.trigrams) {
            let tris = pattern.requiredTrigrams()
            if !tris.isEmpty {
                // Rarest first; stop when what is left is small enough to check item by item.
                var sized = try tris.map { ($0, try count(Postings.prefix(.trigram, info.id, $0), txn)) }
                sized.sort { $0.1 < $1.1 }
                var set = try list(Postings.prefix(.trigram, info.id, sized[0].0), universe, txn)
                for (tri, n) in sized.dropFirst() {
                    if set.count < 16 || n > set.count * 64 { break }
                    set = set.intersection(try list(Postings.prefix(.trigram, info.id, tri), universe, txn))
                }
                return (set, false)
            }
        }
        return (try list(Postings.prefix(.exists, info.id, []), universe, txn), false)
    }

    func pathCandidates(_ pattern: WildcardPattern, _ universe: Int, _ txn: borrowing Transaction) throws -> (DocSet, Bool) {
        let pathID = Schema.pathID
        if !pattern.ignoresCase && !pattern.ignoresDiacritics && !pattern.wordBased {
            let prefix = pattern.prefix
            if let slash = prefix.lastIndex(of: "/") {
                let dir = String(prefix[..<slash])
                if !dir.isEmpty { return (try itemsUnder(dir, universe, txn).0, false) }
            }
        }
        return (try list(Postings.prefix(.exists, pathID, []), universe, txn), false)
    }

    func textCandidates(_ word: String, _ universe: Int, _ txn: borrowing Transaction) throws -> (DocSet, Bool) {
        let words = TextFolding.words(word)
        guard !words.isEmpty else { return (.empty(universe: universe), true) }
        var result: DocSet?
        for w in words {
            var builder = DocSetBuilder(universe: universe)
            for info in Schema.textAttributes {
                try scanTerms(.word, info.id, startingWith: TextFolding.term(w).bytes, txn) { _, chunk in
                    builder.insert(chunk: chunk)
                    return true
                }
            }
            let set = builder.build()
            result = result.map { $0.intersection(set) } ?? set
        }
        return (result!, words.count == 1 && words[0] == TextFolding.fold(word))
    }

    /// Visits the bucket chunks of `info` that can hold values in `interval`.
    func numericBuckets(_ info: AttributeInfo, _ interval: NumericInterval, _ txn: borrowing Transaction,
                        _ body: (UInt32, UnsafeRawBufferPointer) throws -> Bool) throws {
        let first = info.buckets.bucket(interval.low)
        let last = info.buckets.bucket(interval.high)
        let start = Postings.attributePrefix(.number, info.id) + NumericKey.term(first)
        let attributePrefix = Postings.attributePrefix(.number, info.id)
        try start.withUnsafeBytes { s in
            try txn.forEach(postings, from: s) { key, value in
                guard key.count == 3 + 3 + 1 + 4, key.starts(with: attributePrefix) else { return false }
                let bucket = NumericKey.bucket(term: UnsafeRawBufferPointer(rebasing: key[3..<6]))
                guard bucket <= last else { return false }
                return try body(bucket, value)
            }
        }
    }

    /// Items whose value lies in `interval`: whole buckets inside it straight from the postings;
    /// the buckets at its ends are decided from the bucket bounds for whole-number attributes,
    /// else their items are unsure (checked against their records once the rest of the query
    /// has narrowed them down).
    func numeric(_ info: AttributeInfo, _ interval: NumericInterval, _ universe: Int, _ txn: borrowing Transaction) throws -> Candidates {
        guard !interval.low.isNaN, !interval.high.isNaN, interval.low <= interval.high else { return Candidates(.empty(universe: universe)) }
        var builder = DocSetBuilder(universe: universe)
        var unsure = DocSetBuilder(universe: universe)
        var anyUnsure = false
        try numericBuckets(info, interval, txn) { bucket, chunk in
            let range = info.buckets.range(bucket)
            if interval.contains(range) {
                builder.insert(chunk: chunk)
            } else if interval.overlaps(range) {
                if info.integral {
                    let low = range.lowerBound.rounded(.up), high = range.upperBound.rounded(.down)
                    if low > high { return true }
                    if low == high {
                        if interval.contains(low) { builder.insert(chunk: chunk) }
                        return true
                    }
                }
                builder.insert(chunk: chunk)
                unsure.insert(chunk: chunk)
                anyUnsure = true
            }
            return true
        }
        return Candidates(builder.build(), unsure: anyUnsure ? .some(unsure.build()) : .none)
    }

    // MARK: Checking one item

    func matches(_ plan: QueryPlan, _ view: RecordView) -> Bool {
        switch plan {
        case .nothing: return false
        case .exists(let id):
            if id == Schema.allItemsID { return true }
            if id == Schema.pathID { return path(view) != nil }
            return view.find(id) != nil
        case .and(let list): return list.allSatisfy { matches($0, view) }
        case .or(let list): return list.contains { matches($0, view) }
        case .not(let inner): return !matches(inner, view)
        case .numeric(let info, let interval): return view.number(info.id).map(interval.contains) ?? false
        case .string(let info, let pattern): return view.anyString(info.id) { pattern.matches(utf8: $0) }
        case .stringOrder(let info, let op, let pattern):
            return view.anyString(info.id) { bytes in
                let value = pattern.foldValue(String(decoding: bytes, as: UTF8.self))
                let other = pattern.foldValue(pattern.literalText ?? pattern.source)
                switch op {
                case .less: return value < other
                case .lessOrEqual: return value <= other
                case .greater: return value > other
                case .greaterOrEqual: return value >= other
                case .equal: return value == other
                case .notEqual: return value != other
                }
            }
        case .path(let pattern): return path(view).map { pattern.matches(utf8: $0) } ?? false
        case .scope(let dirs):
            guard let p = path(view) else { return false }
            let s = String(decoding: p, as: UTF8.self)
            return dirs.contains { $0 == "/" || s.hasPrefix($0 + "/") }
        case .text(let word):
            let words = TextFolding.words(word)
            let phrase = TextFolding.fold(word)
            let texts = Schema.textAttributes.flatMap { info -> [String] in
                var out: [String] = []
                _ = view.anyString(info.id) { out.append(String(decoding: $0, as: UTF8.self)); return false }
                return out
            }
            let valueWords = texts.flatMap(TextFolding.words)
            guard words.allSatisfy({ w in valueWords.contains { $0.hasPrefix(w) } }) else { return false }
            return words.count == 1 && words[0] == phrase || texts.contains { TextFolding.fold($0).contains(phrase) }
        }
    }

    /// The path of the item in `view`: a file's own, else an app item's kMDItemPath.
    func path(_ view: RecordView) -> UnsafeRawBufferPointer? {
        if view.kind == .file { return view.identifier }
        var found: UnsafeRawBufferPointer?
        _ = view.anyString(Schema.pathID) { found = $0; return true }
        return found
    }
}
