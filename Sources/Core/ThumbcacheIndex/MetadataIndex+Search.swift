import ThumbcacheLMDB

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
                var (set, ranking) = try run(expression, query: query, onlyIn: options.onlyIn, unknown: &unknown, txn)
                if options.pairsLivePhotos { set = try withoutPairedMovies(set, txn) }
                let limit = options.limit ?? Int.max
                let order: [(UInt32, Double?)] = ranking.isActive
                    ? try ranked(set, ranking, limit: limit, txn).map { ($0.0, $0.1) }
                    : set.prefix(limit).map { ($0, nil) }
                var results: [SearchResult] = []
                for (itemNumber, score) in order {
                    guard let view = try recordView(itemNumber, txn) else { continue }
                    var result = try result(itemNumber, view, attributes: options.attributes ?? [], txn)
                    result.score = score
                    if options.snippets, !ranking.queries.isEmpty, let hash = result.contentHash, let document = try document(ofContent: hash, txn) {
                        result.snippet = try snippet(document, ranking.queries, txn)
                    }
                    results.append(result)
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
    package func matchingItemNumbers(_ expression: QueryExpression, onlyIn: [String] = []) throws -> [UInt32] {
        try environment.read { txn in
            var unknown: [String] = []
            return try run(expression, query: "", onlyIn: onlyIn, unknown: &unknown, txn).0.members
        }
    }

    /// Compiles and runs `expression` in `txn`; the attributes it names that no item has are
    /// added to `unknown`. The ranking says what its words scored.
    func run(_ expression: QueryExpression, query: String, onlyIn: [String], unknown: inout [String],
             _ txn: borrowing Transaction) throws -> (ItemSet, TextRanking) {
        var compiler = QueryCompiler(catalog: catalog, meta: meta, query: query)
        var plan = try compiler.compile(expression, txn)
        unknown += compiler.unknownAttributes
        let universe = try universe(txn)
        var ranking = TextRanking()
        plan = try resolvingText(plan, universe: universe, scoring: true, &ranking, txn)
        if !onlyIn.isEmpty { plan = .and([plan, .scope(onlyIn.map { $0.count > 1 && $0.hasSuffix("/") ? String($0.dropLast()) : $0 })]) }
        let executor = QueryExecutor(index: self, universe: universe)
        return (try executor.exact(plan, txn), ranking)
    }
}
