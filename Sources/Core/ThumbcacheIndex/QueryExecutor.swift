import ThumbcacheLMDB
import ThumbcacheSync

/// Evaluates a ``QueryPlan`` in one read transaction: each leaf reads candidates from the
/// posting lists (QueryExecutor+Leaves.swift), conjunctions are ordered by estimated size
/// (QueryExecutor+Planning.swift), and members the lists cannot decide are checked against
/// their records (``RecordMatcher``).
struct QueryExecutor {
    let index: MetadataIndex
    /// Item numbers are below this (the sets' size).
    let universe: Int

    /// Estimates stop counting here (counting reads only each chunk's first byte, so this is generous).
    static let estimateCap = 4_000_000
    /// Checking one item against a predicate costs about this many decoded postings.
    static let verifyCost = 100

    func exact(_ plan: QueryPlan, _ txn: borrowing Transaction) throws -> ItemSet {
        let c = try candidates(plan, txn)
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
    func verify(_ set: ItemSet, _ plan: QueryPlan, _ txn: borrowing Transaction, keeping: Bool = true) throws -> ItemSet {
        let members = set.members
        guard members.count >= Self.parallelVerifyCount else {
            return ItemSet(sorted: try check(members[...], plan, keeping, txn), universe: set.universe)
        }
        let half = members.count / 2
        let snapshot = txn.snapshot
        let helper = HelperWork { [self] () throws -> [UInt32]? in
            try index.environment.read { own in
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
        return ItemSet(sorted: first + second, universe: set.universe)
    }

    private func check(_ itemNumbers: ArraySlice<UInt32>, _ plan: QueryPlan, _ keeping: Bool, _ txn: borrowing Transaction) throws -> [UInt32] {
        try itemNumbers.filter { itemNumber in
            guard let bytes = try txn.get(index.items, key: MetadataIndex.itemNumberBytes(itemNumber)), let view = RecordView(bytes) else { return !keeping }
            return RecordMatcher.matches(plan, view, itemNumber) == keeping
        }
    }

    func candidates(_ plan: QueryPlan, _ txn: borrowing Transaction) throws -> Candidates {
        switch plan {
        case .nothing: return Candidates(.empty(universe: universe))
        case .exists(let id): return Candidates(try list(Postings.prefix(.exists, id, []), txn))
        case .scope(let dirs):
            var set = ItemSet.empty(universe: universe)
            var isExact = true
            for dir in dirs {
                let (s, exact) = try itemsUnder(dir, txn)
                set = set.union(s)
                isExact = isExact && exact
            }
            return Candidates(set, exact: isExact)
        case .or(let list):
            var result = Candidates(.empty(universe: universe))
            for p in list { result.formUnion(try candidates(p, txn)) }
            return result
        case .not(let inner):
            let all = try list(Postings.prefix(.exists, Schema.allItemsID, []), txn)
            return Candidates(all.subtracting(try exact(inner, txn)))
        case .and(let list): return try conjunction(list, txn)
        case .numeric(let info, let interval): return try numeric(info, interval, txn)
        case .string(let info, let pattern): return Candidates(try stringCandidates(info, pattern, txn))
        case .stringOrder(let info, _, _): return Candidates(try list(Postings.prefix(.exists, info.id, []), txn), exact: false)
        case .path(let pattern): return Candidates(try pathCandidates(pattern, txn))
        case .text(let term): return Candidates(try textCandidates(term, txn))
        case .items(let set): return Candidates(set)
        case .fullText(let query): return Candidates(try index.items(matching: query, universe: universe, txn).set)
        }
    }
}
