import ThumbcacheLMDB

extension MetadataIndex {
    /// `set` without the movies of Live Photos whose still is indexed too: a pair is one result,
    /// the still, as Photos shows it (Docs/QUERY.md, "Live Photos"). Decided when asked, so a pair
    /// forms whichever half was indexed first, survives a move and parts when the still goes.
    func withoutPairedMovies(_ set: ItemSet, _ txn: borrowing Transaction) throws -> ItemSet {
        let identifier = Schema.byName[MDItem.livePhotoContentIdentifier]!.id
        let typeTree = Schema.byName[MDItem.contentTypeTree]!.id
        let executor = QueryExecutor(index: self, universe: set.universe)
        let halves = try executor.list(Postings.prefix(.exists, identifier, []), txn).intersection(set)
        guard !halves.isEmpty else { return set }
        var hidden: [UInt32] = []
        for item in halves.members {
            guard let view = try recordView(item, txn) else { continue }
            var types = view.strings(typeTree)
            var isMovie = false
            while let type = types.next(), !isMovie { isMovie = type.elementsEqual("public.movie".utf8) }
            var values = view.strings(identifier)
            // An identifier is a UUID: one with a wildcard's characters pairs with nothing.
            guard isMovie, let value = values.next(), !value.contains(where: { $0 == 0x2A || $0 == 0x3F || $0 == 0x5C }) else { continue }
            let still = QueryExpression.and([
                .comparison(attribute: MDItem.livePhotoContentIdentifier, op: .equal, value: .string(String(decoding: value, as: UTF8.self), []), position: 0),
                .comparison(attribute: MDItem.contentTypeTree, op: .equal, value: .string("public.image", []), position: 0),
            ])
            var unknown: [String] = []
            if try !run(still, query: "", onlyIn: [], unknown: &unknown, txn).0.isEmpty { hidden.append(item) }
        }
        return hidden.isEmpty ? set : set.subtracting(ItemSet(sorted: hidden, universe: set.universe))
    }
}
