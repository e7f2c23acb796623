import ThumbcacheLMDB

extension QueryExecutor {
    /// Conjunctions start from the most selective part; a part much larger than what is left is
    /// checked on the remaining items instead of being read. Items a part is unsure of are
    /// checked only if they survive the other parts.
    func conjunction(_ parts: [QueryPlan], _ txn: borrowing Transaction) throws -> Candidates {
        var positive: [(QueryPlan, Int)] = []
        var negative: [(QueryPlan, Int)] = []
        for p in parts {
            if case .not(let inner) = p { negative.append((inner, try estimate(inner, txn))) }
            else { positive.append((p, try estimate(p, txn))) }
        }
        positive.sort { $0.1 < $1.1 }
        var result: Candidates
        if let first = positive.first {
            result = try candidates(first.0, txn)
        } else {
            result = Candidates(try list(Postings.prefix(.exists, Schema.allItemsID, []), txn))
        }
        for (p, est) in positive.dropFirst() {
            if result.set.isEmpty { return result }
            if est > result.set.count * Self.verifyCost { result.unsure = .all; continue }
            result.formIntersection(try candidates(p, txn))
        }
        for (p, est) in negative {
            if result.set.isEmpty { return result }
            if est > result.set.count * Self.verifyCost { result.unsure = .all; continue }
            result.set = result.set.subtracting(try exact(p, txn))
        }
        return result
    }

    /// About how many items `plan` reads from the index (capped at ``estimateCap``).
    func estimate(_ plan: QueryPlan, _ txn: borrowing Transaction) throws -> Int {
        switch plan {
        case .nothing: return 0
        case .exists(let id): return try count(Postings.prefix(.exists, id, []), txn)
        case .and(let list): return try list.map { try estimate($0, txn) }.min() ?? universe
        case .or(let list): return try list.reduce(0) { $0 + (try estimate($1, txn)) }
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
        case .scope, .stringOrder, .path, .text, .fullText: return Self.estimateCap
        case .items(let set): return set.count
        }
    }
}
