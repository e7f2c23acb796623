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
    /// Give each result of a query with words a ``SearchResult/snippet`` of its text.
    public var snippets: Bool
    /// A Live Photo is one result, its still: the movie paired with it is left out (true by default).
    public var pairsLivePhotos: Bool

    public init(onlyIn: [String] = [], limit: Int? = nil, attributes: [String]? = nil, parser: QueryParser = QueryParser(),
                snippets: Bool = false, pairsLivePhotos: Bool = true) {
        self.snippets = snippets
        self.pairsLivePhotos = pairsLivePhotos
        self.onlyIn = onlyIn
        self.limit = limit
        self.attributes = attributes
        self.parser = parser
    }
}

/// The answer to a search.
public struct SearchResults: Sendable {
    /// How many items match (results may hold fewer, see ``SearchOptions/limit``). A query with
    /// words lists the best matches first (Docs/QUERY.md, "Ranking"); others, in index order.
    public var count: Int
    public var results: [SearchResult]
    /// Attribute names in the query that no item has ever had (a typo?).
    public var unknownAttributes: [String]
}
