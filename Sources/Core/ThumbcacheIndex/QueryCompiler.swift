import ThumbcacheLMDB

/// Turns a parsed query into a ``QueryPlan`` over the index's attributes: names become attribute
/// numbers, comparisons become intervals and patterns, and type mismatches become
/// ``QueryError``s at their position. Names no item has ever had compile to `.nothing` and are
/// collected in ``unknownAttributes``.
struct QueryCompiler {
    let catalog: AttributeCatalog
    let meta: Database
    /// The query's text, quoted by errors.
    let query: String
    private(set) var unknownAttributes: [String] = []

    init(catalog: AttributeCatalog, meta: Database, query: String) {
        self.catalog = catalog
        self.meta = meta
        self.query = query
    }

    mutating func compile(_ expression: QueryExpression, _ txn: borrowing Transaction) throws -> QueryPlan {
        switch expression {
        case .and(let list): return .and(try list.map { try compile($0, txn) })
        case .or(let list): return .or(try list.map { try compile($0, txn) })
        case .not(let inner): return .not(try compile(inner, txn))
        case .text(let word, _): return .text(TextTerm(word))
        case .inRange(let name, let low, let high, let position):
            guard let info = try attribute(named: name, txn) else { return .nothing }
            guard !info.type.isText else {
                throw QueryError(message: "InRange needs a number or date attribute; \(name) holds strings", position: position, query: query)
            }
            return .numeric(info, NumericInterval(low: try number(low, for: info, at: position), high: try number(high, for: info, at: position)))
        case .comparison(let name, let op, let value, let position):
            if name == MDItem.path { return try pathComparison(op, value, at: position) }
            if name == MDItem.textContent { return try textContentComparison(op, value, at: position) }
            guard let info = try attribute(named: name, txn) else { return .nothing }
            return info.type.isText ? try textComparison(info, op, value, at: position) : try numericComparison(info, op, value, at: position)
        }
    }

    /// `kMDItemPath`: matched on the path (directory lists narrow it), never ordered.
    private func pathComparison(_ op: ComparisonOperator, _ value: QueryValue, at position: Int) throws -> QueryPlan {
        guard case .string(let text, let modifiers) = value else {
            throw QueryError(message: "\(MDItem.path) holds strings: quote the value", position: position, query: query)
        }
        let leaf = QueryPlan.path(Self.pattern(text, modifiers))
        switch op {
        case .equal: return leaf
        case .notEqual: return .and([.exists(Schema.pathID), .not(leaf)])
        default: throw QueryError(message: "\(MDItem.path) compares with == and != only", position: position, query: query)
        }
    }

    private func textComparison(_ info: AttributeInfo, _ op: ComparisonOperator, _ value: QueryValue, at position: Int) throws -> QueryPlan {
        guard case .string(let text, let modifiers) = value else {
            throw QueryError(message: "\(info.name) holds strings: quote the value", position: position, query: query)
        }
        let pattern = Self.pattern(text, modifiers)
        switch op {
        case .equal: return .string(info, pattern)
        case .notEqual: return .and([.exists(info.id), .not(.string(info, pattern))])
        default: return .stringOrder(info, op, pattern)
        }
    }

    /// `kMDItemTextContent == "words"cd`: the words inside files, through the full-text index.
    private func textContentComparison(_ op: ComparisonOperator, _ value: QueryValue, at position: Int) throws -> QueryPlan {
        guard case .string(let text, let modifiers) = value else {
            throw QueryError(message: "\(MDItem.textContent) holds text: quote the words", position: position, query: query)
        }
        guard let words = FullTextQuery(text, ignoresCase: modifiers.contains(.caseInsensitive),
                                        ignoresDiacritics: modifiers.contains(.diacriticInsensitive)) else {
            throw QueryError(message: "\(MDItem.textContent) needs a word to look for", position: position, query: query)
        }
        switch op {
        case .equal: return .fullText(words)
        case .notEqual: return .and([.exists(Schema.allItemsID), .not(.fullText(words))])
        default: throw QueryError(message: "\(MDItem.textContent) compares with == and != only", position: position, query: query)
        }
    }

    private func numericComparison(_ info: AttributeInfo, _ op: ComparisonOperator, _ value: QueryValue, at position: Int) throws -> QueryPlan {
        let n = try number(value, for: info, at: position)
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

    /// The attribute called `name`, reloading the catalog once if another process may have added it.
    private mutating func attribute(named name: String, _ txn: borrowing Transaction) throws -> AttributeInfo? {
        if let info = catalog.info(named: name) { return info }
        try catalog.reload(txn, meta: meta)
        if let info = catalog.info(named: name) { return info }
        if !unknownAttributes.contains(name) { unknownAttributes.append(name) }
        return nil
    }

    private func number(_ value: QueryValue, for info: AttributeInfo, at position: Int) throws -> Double {
        switch value {
        case .number(let n): return n
        case .date(let d) where info.type == .date: return d
        case .date: throw QueryError(message: "\(info.name) holds numbers, not dates", position: position, query: query)
        case .string:
            let hint = info.type == .date ? "$time.iso(…) or another $time value" : "a number"
            throw QueryError(message: "\(info.name) holds \(info.type)s: compare it with \(hint), not a string", position: position, query: query)
        }
    }

    static func pattern(_ text: String, _ modifiers: StringModifiers) -> WildcardPattern {
        WildcardPattern(text, ignoresCase: modifiers.contains(.caseInsensitive), ignoresDiacritics: modifiers.contains(.diacriticInsensitive),
                        wordBased: modifiers.contains(.wordBased))
    }
}
