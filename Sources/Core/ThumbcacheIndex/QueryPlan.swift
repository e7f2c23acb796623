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
    case text(TextTerm)
    case scope([String])
    /// Words inside files (kMDItemTextContent); resolved to ``items(_:)`` before execution.
    case fullText(FullTextQuery)
    /// Items already known (a resolved full-text predicate).
    case items(ItemSet)
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
        case some(ItemSet)
        /// Any member may not match.
        case all
    }

    var set: ItemSet
    var unsure: Unsure

    init(_ set: ItemSet, unsure: Unsure = .none) {
        self.set = set
        self.unsure = unsure
    }

    init(_ set: ItemSet, exact: Bool) { self.init(set, unsure: exact ? .none : .all) }

    init(_ pair: (ItemSet, Bool)) { self.init(pair.0, exact: pair.1) }

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
