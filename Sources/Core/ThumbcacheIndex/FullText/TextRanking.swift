import ThumbcacheLMDB

/// What a query's words scored: BM25 of the words inside files per item, the plain words that
/// also match names, titles and tags, and the full-text predicates (for snippets).
struct TextRanking {
    /// Each scored predicate's items and scores (an item may be in several: they add up).
    var scores: [[(UInt32, Double)]] = []
    var queries: [FullTextQuery] = []
    var plainWords: [TextTerm] = []
    var isActive: Bool { !queries.isEmpty || !plainWords.isEmpty }

    /// A plain word in an item's name, title, keywords or tags counts as much as this: above any
    /// but the strongest body match, as Tracker weighs a title 10 to the content's 2.
    static let nameWeight = 5.0
    /// The attribute ranking breaks ties by (newest first).
    static let modificationDateID = Schema.builtIn.first { $0.name == MDItem.contentModificationDate }!.id
}

extension MetadataIndex {
    /// The items holding the documents, and each one's score.
    func items(ofDocuments documents: [UInt32], scores: [Double], universe: Int, _ txn: borrowing Transaction)
        throws -> (set: ItemSet, scores: [(UInt32, Double)])
    {
        var builder = ItemSetBuilder(universe: universe)
        var itemScores: [(UInt32, Double)] = []
        itemScores.reserveCapacity(documents.count)
        try forEachItem(ofDocuments: documents, txn) { i, item in
            builder.insert(item)
            itemScores.append((item, scores[i]))
        }
        return (builder.build(), itemScores)
    }

    /// The items holding `query`'s words, and each one's score.
    func items(matching query: FullTextQuery, universe: Int, _ txn: borrowing Transaction) throws -> (set: ItemSet, scores: [(UInt32, Double)]) {
        let match = try match(query, txn)
        return try items(ofDocuments: match.documents, scores: try scores(match, txn), universe: universe, txn)
    }

    /// `plan` with each full-text predicate resolved to its items, and each plain word matching
    /// the words inside files too; scores are kept for predicates that are not negated. Several
    /// full-text predicates in one conjunction are intersected as documents, before any item is read.
    func resolvingText(_ plan: QueryPlan, universe: Int, scoring: Bool, _ ranking: inout TextRanking,
                       _ txn: borrowing Transaction) throws -> QueryPlan {
        switch plan {
        case .and(let list):
            let queries = list.compactMap { part -> FullTextQuery? in if case .fullText(let q) = part { q } else { nil } }
            guard queries.count >= 2 else {
                return .and(try list.map { try resolvingText($0, universe: universe, scoring: scoring, &ranking, txn) })
            }
            let rest = list.filter { if case .fullText = $0 { false } else { true } }
            let match = try conjunction(queries, txn)
            let (set, scores) = try items(ofDocuments: match.documents, scores: try self.scores(match, txn), universe: universe, txn)
            if scoring {
                ranking.queries += queries
                ranking.scores.append(scores)
            }
            return .and([.items(set)] + (try rest.map { try resolvingText($0, universe: universe, scoring: scoring, &ranking, txn) }))
        case .or(let list): return .or(try list.map { try resolvingText($0, universe: universe, scoring: scoring, &ranking, txn) })
        case .not(let inner): return .not(try resolvingText(inner, universe: universe, scoring: false, &ranking, txn))
        case .fullText(let query):
            return .items(try resolve(query, universe: universe, scoring: scoring, &ranking, txn))
        case .text(let term):
            if scoring { ranking.plainWords.append(term) }
            guard let query = FullTextQuery(term.source) else { return plan }
            return .or([plan, .items(try resolve(query, universe: universe, scoring: scoring, &ranking, txn))])
        default: return plan
        }
    }

    private func resolve(_ query: FullTextQuery, universe: Int, scoring: Bool, _ ranking: inout TextRanking,
                         _ txn: borrowing Transaction) throws -> ItemSet {
        let (set, scores) = try items(matching: query, universe: universe, txn)
        if scoring {
            ranking.queries.append(query)
            ranking.scores.append(scores)
        }
        return set
    }

    /// The best `limit` items of `set`, best first: full-text score plus
    /// ``TextRanking/nameWeight`` for each plain word in a name, title or tag; ties newest first.
    func ranked(_ set: ItemSet, _ ranking: TextRanking, limit: Int, _ txn: borrowing Transaction) throws -> [(UInt32, Double)] {
        // A count alone (`search --count`) asks for no results: nothing to score.
        guard limit > 0 else { return [] }
        var scored: [(UInt32, Double)]
        if ranking.scores.count == 1, ranking.plainWords.isEmpty, case let only = ranking.scores[0].filter({ set.contains($0.0) }),
           only.count == set.count {
            scored = only  // one scored predicate decided every member: no table needed
        } else {
            var total: [UInt32: Double] = [:]
            for list in ranking.scores { for (item, score) in list where set.contains(item) { total[item, default: 0] += score } }
            scored = set.members.map { ($0, total[$0] ?? 0) }
            if !ranking.plainWords.isEmpty {
                let executor = QueryExecutor(index: self, universe: set.universe)
                for term in ranking.plainWords {
                    let (named, _) = try executor.textCandidates(term, txn)
                    for i in scored.indices where named.contains(scored[i].0) { scored[i].1 += TextRanking.nameWeight }
                }
            }
        }
        // Only those scoring at least the limit-th best are sorted (ties at the edge included).
        if limit < scored.count {
            let edge = Self.largest(scored.map(\.1), rank: limit)
            scored.removeAll { $0.1 < edge }
        }
        scored.sort { $0.1 > $1.1 }
        // Equal scores: the most recently modified first (dates read only where scores tie).
        var start = 0
        while start < scored.count {
            var end = start + 1
            while end < scored.count, scored[end].1 == scored[start].1 { end += 1 }
            if end - start > 1 {
                let dated = try scored[start..<end].map { entry -> ((UInt32, Double), Double) in
                    let view = try recordView(entry.0, txn)
                    return (entry, view?.number(TextRanking.modificationDateID) ?? 0)
                }
                let sorted = dated.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.0 > $1.0.0 }.map(\.0)
                scored.replaceSubrange(start..<end, with: sorted)
            }
            start = end
        }
        return Array(scored.prefix(limit))
    }

    /// The `rank`-th largest of `values` (rank ≥ 1, at most their count), by quickselect.
    static func largest(_ values: [Double], rank: Int) -> Double {
        var v = values
        var lo = 0, hi = v.count - 1
        let k = rank - 1
        while lo < hi {
            let pivot = v[(lo + hi) / 2]
            var i = lo, j = hi
            while i <= j {
                while v[i] > pivot { i += 1 }
                while v[j] < pivot { j -= 1 }
                if i <= j { v.swapAt(i, j); i += 1; j -= 1 }
            }
            if k <= j { hi = j } else if k >= i { lo = i } else { return v[k] }
        }
        return v[k]
    }
}
