import ThumbcacheLMDB

/// What a query's words scored: BM25 of the words inside files per item, the plain words that
/// also match names, titles and tags, and the full-text predicates (for snippets).
struct TextRanking {
    var scores: [UInt32: Double] = [:]
    var queries: [FullTextQuery] = []
    var plainWords: [String] = []
    var isActive: Bool { !queries.isEmpty || !plainWords.isEmpty }

    /// A plain word in an item's name, title, keywords or tags counts as much as this: above any
    /// but the strongest body match, as Tracker weighs a title 10 to the content's 2.
    static let nameWeight = 5.0
    /// The attribute ranking breaks ties by (newest first).
    static let modificationDateID: UInt16 = 7
}

extension MetadataIndex {
    /// The items holding `query`'s words, and each one's score.
    func items(matching query: FullTextQuery, universe: Int, _ txn: borrowing Transaction) throws -> (set: ItemSet, scores: [(UInt32, Double)]) {
        let match = try match(query, txn)
        let scores = try self.scores(match, txn)
        var builder = ItemSetBuilder(universe: universe)
        var itemScores: [(UInt32, Double)] = []
        for (document, score) in zip(match.documents, scores) {
            try items(ofDocument: document, txn) { item in
                builder.insert(item)
                itemScores.append((item, score))
            }
        }
        return (builder.build(), itemScores)
    }

    /// `plan` with each full-text predicate resolved to its items, and each plain word matching
    /// the words inside files too; scores are kept for predicates that are not negated.
    func resolvingText(_ plan: QueryPlan, universe: Int, scoring: Bool, _ ranking: inout TextRanking,
                       _ txn: borrowing Transaction) throws -> QueryPlan {
        switch plan {
        case .and(let list): return .and(try list.map { try resolvingText($0, universe: universe, scoring: scoring, &ranking, txn) })
        case .or(let list): return .or(try list.map { try resolvingText($0, universe: universe, scoring: scoring, &ranking, txn) })
        case .not(let inner): return .not(try resolvingText(inner, universe: universe, scoring: false, &ranking, txn))
        case .fullText(let query):
            return .items(try resolve(query, universe: universe, scoring: scoring, &ranking, txn))
        case .text(let word):
            if scoring { ranking.plainWords.append(word) }
            guard let query = FullTextQuery(word) else { return plan }
            return .or([plan, .items(try resolve(query, universe: universe, scoring: scoring, &ranking, txn))])
        default: return plan
        }
    }

    private func resolve(_ query: FullTextQuery, universe: Int, scoring: Bool, _ ranking: inout TextRanking,
                         _ txn: borrowing Transaction) throws -> ItemSet {
        let (set, scores) = try items(matching: query, universe: universe, txn)
        if scoring {
            ranking.queries.append(query)
            for (item, score) in scores { ranking.scores[item, default: 0] += score }
        }
        return set
    }

    /// `members` best first: full-text score plus ``TextRanking/nameWeight`` for each plain word
    /// in a name, title or tag; ties newest first.
    func ranked(_ members: [UInt32], _ ranking: TextRanking, universe: Int, _ txn: borrowing Transaction) throws -> [(UInt32, Double)] {
        var scored = members.map { ($0, ranking.scores[$0] ?? 0) }
        if !ranking.plainWords.isEmpty {
            let executor = QueryExecutor(index: self, universe: universe)
            for word in ranking.plainWords {
                let (named, _) = try executor.textCandidates(word, txn)
                for i in scored.indices where named.contains(scored[i].0) { scored[i].1 += TextRanking.nameWeight }
            }
        }
        scored.sort { $0.1 > $1.1 }
        // Equal scores: the most recently modified first (dates read only where scores tie).
        var start = 0
        while start < scored.count {
            var end = start + 1
            while end < scored.count, scored[end].1 == scored[start].1 { end += 1 }
            if end - start > 1 {
                let dated = try scored[start..<end].map { entry -> ((UInt32, Double), Double) in
                    let view = try txn.get(items, key: Self.itemNumberBytes(entry.0)).flatMap(RecordView.init)
                    return (entry, view?.number(TextRanking.modificationDateID) ?? 0)
                }
                let sorted = dated.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0.0 > $1.0.0 }.map(\.0)
                scored.replaceSubrange(start..<end, with: sorted)
            }
            start = end
        }
        return scored
    }
}
