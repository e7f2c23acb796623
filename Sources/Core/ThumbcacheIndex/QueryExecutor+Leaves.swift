import ThumbcacheLMDB

/// The leaves: candidate sets read from the posting lists (and, for a directory's own files, `ids`).
extension QueryExecutor {
    /// Items in one posting list, up to the cap.
    func count(_ prefix: [UInt8], _ txn: borrowing Transaction) throws -> Int {
        var n = 0
        try prefix.withUnsafeBytes { start in
            try txn.forEach(index.postings, from: start) { key, value in
                guard key.count == prefix.count + 4, key.starts(with: prefix) else { return false }
                n += Postings.count(value)
                return n < Self.estimateCap
            }
        }
        return n
    }

    func list(_ prefix: [UInt8], _ txn: borrowing Transaction) throws -> ItemSet {
        var builder = ItemSetBuilder(universe: universe)
        try collect(prefix, into: &builder, txn)
        return builder.build()
    }

    func collect(_ prefix: [UInt8], into builder: inout ItemSetBuilder, _ txn: borrowing Transaction) throws {
        try prefix.withUnsafeBytes { start in
            try txn.forEach(index.postings, from: start) { key, value in
                guard key.count == prefix.count + 4, key.starts(with: prefix) else { return false }
                builder.insert(chunk: value)
                return true
            }
        }
    }

    /// The items at any depth under `directory` (absolute, no trailing "/"), and whether exactly
    /// those: its directory list, which holds the items of its subdirectories, and its own files
    /// from `ids` (see ``ItemTerms/listsOwnDirectory(_:pathBytes:)``). "/" has no list of its own: every
    /// item with a path is under it. A directory longer than a term shares its cut term's list.
    func itemsUnder(_ directory: String, _ txn: borrowing Transaction) throws -> (ItemSet, Bool) {
        if directory == "/" { return (try list(Postings.prefix(.exists, Schema.pathID, []), txn), true) }
        let term = TextFolding.term(directory)
        var builder = ItemSetBuilder(universe: universe)
        try collect(Postings.prefix(.directory, Schema.pathID, term.bytes), into: &builder, txn)
        try forEachFile(directlyIn: directory, txn) { builder.insert($0) }
        return (builder.build(), !term.truncated)
    }

    /// Calls `body` with the item number of each file directly in `directory` that has a plain
    /// `ids` key (its path). `ids` is in path order, so a directory's files are one range; each
    /// subdirectory met in it is skipped with one seek, past every key under it.
    func forEachFile(directlyIn directory: String, _ txn: borrowing Transaction, _ body: (UInt32) -> Void) throws {
        let slash = UInt8(ascii: "/")
        let prefix = [MetadataIndex.Namespace.file.rawValue] + Array(directory.utf8) + [slash]
        guard prefix.count <= 1 + MetadataIndex.maxPlainKeyBytes else { return }  // its files have hashed keys
        try txn.withCursor(index.ids) { c in
            var entry = try c.seek(atLeast: prefix)
            while let e = entry, e.key.starts(with: prefix) {
                let plain = e.key.count > 1 + MetadataIndex.maxPlainKeyBytes ? 1 + MetadataIndex.hashedKeyTextBytes : e.key.count
                if let next = e.key[prefix.count..<plain].firstIndex(of: slash) {
                    // A subdirectory: on to the first key after "sub/…" ("sub0", as "0" follows "/").
                    entry = try c.seek(atLeast: Array(e.key[..<next]) + [slash + 1])
                    continue
                }
                if plain == e.key.count, let itemNumber = MetadataIndex.itemNumber(e.value) { body(itemNumber) }
                entry = try c.next()
            }
        }
    }

    /// Visits the chunks of every term of `kind`/`attribute` whose term starts with `termPrefix`,
    /// in term order; `body` gets the term and the chunk, and returns false to stop.
    func scanTerms(_ kind: PostingKind, _ attribute: UInt16, startingWith termPrefix: [UInt8], _ txn: borrowing Transaction,
                   _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let start = Postings.attributePrefix(kind, attribute) + termPrefix
        try start.withUnsafeBytes { s in
            try txn.forEach(index.postings, from: s) { key, value in
                guard key.count >= start.count + 5, key.starts(with: start) else { return false }
                return try body(UnsafeRawBufferPointer(rebasing: key[3..<key.count - 5]), value)
            }
        }
    }

    /// Candidates for `attribute == pattern` from whole-value or word terms (`kind`).
    func termCandidates(_ kind: PostingKind, _ info: AttributeInfo, _ pattern: WildcardPattern,
                        _ txn: borrowing Transaction) throws -> (ItemSet, Bool) {
        let foldExact = pattern.matchesFoldedTermsExactly
        if let literal = pattern.literalText {
            let term = TextFolding.term(TextFolding.fold(literal))
            let folded = try list(Postings.prefix(kind, info.id, term.bytes), txn)
            if kind == .value, !pattern.ignoresCase, !pattern.ignoresDiacritics, literal.utf8.count <= 112, !term.truncated {
                // Case and accents kept: the exact-value lists tell which folded matches are written so.
                if !term.bytes.elementsEqual(literal.utf8) {
                    return (try list(Postings.prefix(.exactValue, info.id, TextFolding.exactTerm(folded: term.bytes, raw: literal)), txn), true)
                }
                // Written as folded: the folded matches minus those written otherwise, plus lists
                // that hold both spellings (marked with an exact term of their own).
                var variants = ItemSetBuilder(universe: universe)
                try scanTerms(.exactValue, info.id, startingWith: term.bytes + [1], txn) { _, chunk in
                    variants.insert(chunk: chunk)
                    return true
                }
                let both = try list(Postings.prefix(.exactValue, info.id, TextFolding.exactTerm(folded: term.bytes, raw: literal)), txn)
                return (folded.subtracting(variants.build()).union(both), true)
            }
            return (folded, foldExact && !term.truncated)
        }
        let prefix = TextFolding.term(TextFolding.fold(pattern.prefix)).bytes
        var builder = ItemSetBuilder(universe: universe)
        var lastTerm: [UInt8] = []
        var lastMatched = false
        let everyTerm = pattern.isPrefixPattern
        try scanTerms(kind, info.id, startingWith: prefix, txn) { term, chunk in
            if !term.elementsEqual(lastTerm) {
                lastTerm = Array(term)
                lastMatched = everyTerm || pattern.matchesFoldedTerm(String(decoding: term, as: UTF8.self))
            }
            if lastMatched { builder.insert(chunk: chunk) }
            return true
        }
        return (builder.build(), foldExact)
    }

    func stringCandidates(_ info: AttributeInfo, _ pattern: WildcardPattern, _ txn: borrowing Transaction) throws -> (ItemSet, Bool) {
        if pattern.wordBased, info.policy.contains(.words) { return try termCandidates(.word, info, pattern, txn) }
        if !pattern.wordBased, info.policy.contains(.values) { return try termCandidates(.value, info, pattern, txn) }
        if !pattern.wordBased, info.policy.contains(.trigrams) {
            let tris = pattern.requiredTrigrams()
            if !tris.isEmpty {
                // Rarest first; stop when what is left is small enough to check item by item.
                var sized = try tris.map { ($0, try count(Postings.prefix(.trigram, info.id, $0), txn)) }
                sized.sort { $0.1 < $1.1 }
                var set = try list(Postings.prefix(.trigram, info.id, sized[0].0), txn)
                for (tri, n) in sized.dropFirst() {
                    if set.count < 16 || n > set.count * 64 { break }
                    set = set.intersection(try list(Postings.prefix(.trigram, info.id, tri), txn))
                }
                return (set, false)
            }
        }
        return (try list(Postings.prefix(.exists, info.id, []), txn), false)
    }

    func pathCandidates(_ pattern: WildcardPattern, _ txn: borrowing Transaction) throws -> (ItemSet, Bool) {
        let pathID = Schema.pathID
        if !pattern.ignoresCase && !pattern.ignoresDiacritics && !pattern.wordBased {
            let prefix = pattern.prefix
            if let slash = prefix.lastIndex(of: "/") {
                let dir = String(prefix[..<slash])
                if !dir.isEmpty { return (try itemsUnder(dir, txn).0, false) }
            }
        }
        return (try list(Postings.prefix(.exists, pathID, []), txn), false)
    }

    func textCandidates(_ term: TextTerm, _ txn: borrowing Transaction) throws -> (ItemSet, Bool) {
        let words = term.words
        guard !words.isEmpty else { return (.empty(universe: universe), true) }
        var result: ItemSet?
        for w in words {
            var builder = ItemSetBuilder(universe: universe)
            for info in Schema.textAttributes {
                try scanTerms(.word, info.id, startingWith: TextFolding.term(w).bytes, txn) { _, chunk in
                    builder.insert(chunk: chunk)
                    return true
                }
            }
            let set = builder.build()
            result = result.map { $0.intersection(set) } ?? set
        }
        return (result!, words.count == 1 && words[0] == term.phrase)
    }

    /// Visits the bucket chunks of `info` that can hold values in `interval`.
    func numericBuckets(_ info: AttributeInfo, _ interval: NumericInterval, _ txn: borrowing Transaction,
                        _ body: (UInt32, UnsafeRawBufferPointer) throws -> Bool) throws {
        let first = info.buckets.bucket(interval.low)
        let last = info.buckets.bucket(interval.high)
        let start = Postings.attributePrefix(.number, info.id) + NumericKey.term(first)
        let attributePrefix = Postings.attributePrefix(.number, info.id)
        try start.withUnsafeBytes { s in
            try txn.forEach(index.postings, from: s) { key, value in
                guard key.count == 3 + 3 + 1 + 4, key.starts(with: attributePrefix) else { return false }
                let bucket = NumericKey.bucket(term: UnsafeRawBufferPointer(rebasing: key[3..<6]))
                guard bucket <= last else { return false }
                return try body(bucket, value)
            }
        }
    }

    /// Items whose value lies in `interval`: whole buckets inside it straight from the postings;
    /// the buckets at its ends are decided from the bucket bounds for whole-number attributes,
    /// else their items are unsure (checked against their records once the rest of the query
    /// has narrowed them down).
    func numeric(_ info: AttributeInfo, _ interval: NumericInterval, _ txn: borrowing Transaction) throws -> Candidates {
        guard !interval.low.isNaN, !interval.high.isNaN, interval.low <= interval.high else { return Candidates(.empty(universe: universe)) }
        var builder = ItemSetBuilder(universe: universe)
        var unsure = ItemSetBuilder(universe: universe)
        var anyUnsure = false
        try numericBuckets(info, interval, txn) { bucket, chunk in
            let range = info.buckets.range(bucket)
            if interval.contains(range) {
                builder.insert(chunk: chunk)
            } else if interval.overlaps(range) {
                if info.integral {
                    let low = range.lowerBound.rounded(.up), high = range.upperBound.rounded(.down)
                    if low > high { return true }
                    if low == high {
                        if interval.contains(low) { builder.insert(chunk: chunk) }
                        return true
                    }
                }
                builder.insert(chunk: chunk)
                unsure.insert(chunk: chunk)
                anyUnsure = true
            }
            return true
        }
        return Candidates(builder.build(), unsure: anyUnsure ? .some(unsure.build()) : .none)
    }
}
