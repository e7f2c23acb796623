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
                let (set, _) = try run(expression, query: query, onlyIn: options.onlyIn, unknown: &unknown, txn)
                var results: [SearchResult] = []
                for itemNumber in set.prefix(options.limit ?? Int.max) {
                    guard let r = try record(itemNumber, txn) else { continue }
                    results.append(try result(itemNumber, r, attributes: options.attributes ?? [], txn))
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
    /// added to `unknown`.
    func run(_ expression: QueryExpression, query: String, onlyIn: [String], unknown: inout [String],
             _ txn: borrowing Transaction) throws -> (ItemSet, QueryPlan) {
        var compiler = QueryCompiler(catalog: catalog, meta: meta, query: query)
        var plan = try compiler.compile(expression, txn)
        unknown += compiler.unknownAttributes
        if !onlyIn.isEmpty { plan = .and([plan, .scope(onlyIn.map { $0.count > 1 && $0.hasSuffix("/") ? String($0.dropLast()) : $0 })]) }
        let executor = QueryExecutor(index: self, universe: try universe(txn))
        return (try executor.exact(plan, txn), plan)
    }
}
