import ThumbcacheLMDB

extension ThumbnailStore {
    /// Reads every record and checks the format's invariants (Docs/OPERATIONS.md, "Checking a
    /// cache"): each decodes; a long path's key is its path's hash; a thumbnail's header agrees
    /// with its key and its bytes are the image it says; access stamps and queued uploads name a
    /// stored thumbnail; an entry's vouch holds (below). Thumbnails no stat entry reaches are
    /// garbage, counted, not violations. One read transaction: writers go on meanwhile.
    public func check() throws(StoreError) -> IntegrityReport {
        try check(words: nil)
    }

    /// What a search index says of the words stat entries vouch for: the stamps it holds valid
    /// (as entries keep them), whether a detected type has words, and which of some contents it
    /// does not hold the text of. A re-warm takes a vouched file's words as indexed without looking, so
    /// words the index lost would never be read again (FORMAT.md, "What an entry vouches for").
    package struct WordsVouches {
        package var valid: Set<UInt64>
        package var typeHasWords: (String) -> Bool
        package var unindexed: (Set<ContentHash>) -> Set<ContentHash>

        package init(valid: Set<UInt64>, typeHasWords: @escaping (String) -> Bool, unindexed: @escaping (Set<ContentHash>) -> Set<ContentHash>) {
            self.valid = valid
            self.typeHasWords = typeHasWords
            self.unindexed = unindexed
        }
    }

    /// ``check()``, and with `words`, each entry's vouch for its words held to the index too.
    package func check(words: WordsVouches?) throws(StoreError) -> IntegrityReport {
        try reading("check") { h, txn in
            var report = IntegrityReport()
            let files = try Self.checkFiles(h, txn, words: words, &report)
            let live = files.live
            var vouched = files.vouched
            try txn.forEach(h.thumbnails) { key, value in
                report.read(Name.thumbnails)
                let thumbnailKey = ThumbnailKey(bytes: key)
                func bad(_ problem: String) {
                    report.found(IntegrityFinding(database: Name.thumbnails, record: thumbnailKey?.description ?? hexText(key), problem: problem,
                                                  repair: "thumbnail removed (made again when asked)", key: Array(key)))
                }
                guard let thumbnailKey else { bad("the key does not decode"); return true }
                // Stored, if broken: its repair moves the count on, so the vouch goes with it.
                if thumbnailKey.variant.kind == .thumbnail { vouched.remove(thumbnailKey.content) }
                guard let (header, image) = ThumbnailHeader.decode(value) else { bad("the record does not decode"); return true }
                if let problem = Self.disagreement(thumbnailKey, header, image) { bad(problem); return true }
                if !live.contains(thumbnailKey.content) { report.garbage["thumbnails no file has", default: 0] += 1 }
                return true
            }
            // What is left vouches for thumbnails none of which is stored, or for words the index
            // does not hold: their entries, found again (keeping every vouched path from the first
            // pass would cost a large tree's memory).
            let unindexed = words?.unindexed(files.vouchedWords) ?? []
            if !vouched.isEmpty || !unindexed.isEmpty { try Self.reportVouches(for: vouched, words: unindexed, words, h, txn, &report) }
            try txn.forEach(h.access) { key, value in
                report.read(Name.access)
                let stored = try txn.get(h.thumbnails, key: key) != nil
                if value.count != 4 || !stored {
                    report.found(IntegrityFinding(database: Name.access, record: ThumbnailKey(bytes: key)?.description ?? hexText(key),
                                                  problem: value.count != 4 ? "the stamp is not 4 bytes" : "a stamp of a thumbnail not stored",
                                                  repair: "stamp removed", key: Array(key)))
                }
                return true
            }
            try txn.forEach(h.failures) { key, value in
                report.read(Name.failures)
                guard key.count == 20, value.first == 1 || FailureRecord.decode(value) != nil else {
                    report.found(IntegrityFinding(database: Name.failures, record: hexText(key), problem: "the failure record does not decode",
                                                  repair: "record removed (the bytes are tried again)", key: Array(key)))
                    return true
                }
                if value.first == 1 { report.garbage["failure records of format 1", default: 0] += 1 }
                if let content = ContentHash(bytes: key), !live.contains(content) { report.garbage["failure records no file has", default: 0] += 1 }
                return true
            }
            try txn.forEach(h.uploads) { key, value in
                report.read(Name.uploads)
                let thumbnailKey = ThumbnailKey(bytes: key)
                if thumbnailKey == nil || !(value.isEmpty || value.first == UInt8(ascii: "{")) {
                    report.found(IntegrityFinding(database: Name.uploads, record: thumbnailKey?.description ?? hexText(key),
                                                  problem: "the queued upload does not decode", repair: "upload dropped", key: Array(key)))
                } else if try txn.get(h.thumbnails, key: key) == nil {
                    // The uploader drops these itself when it comes to them.
                    report.garbage["queued uploads of thumbnails gone", default: 0] += 1
                }
                return true
            }
            return report
        }
    }

    /// The `files` pass of ``check()``: every entry's content, and the contents of the entries whose
    /// vouch holds at the store's count for a plan that makes thumbnails. A re-warm takes their
    /// thumbnails as stored without looking, so one not stored would never be made again
    /// (FORMAT.md, "What an entry vouches for").
    private static func checkFiles(_ h: Handles, _ txn: borrowing Transaction, words: WordsVouches?, _ report: inout IntegrityReport) throws
        -> (live: Set<ContentHash>, vouched: Set<ContentHash>, vouchedWords: Set<ContentHash>)
    {
        var live: Set<ContentHash> = []
        var vouched: Set<ContentHash> = []
        var vouchedWords: Set<ContentHash> = []
        let removals = try removalCount(h, txn)
        try txn.forEach(h.files) { key, value in
            report.read(Name.files)
            func bad(_ problem: String) {
                report.found(IntegrityFinding(database: Name.files, record: printable(key), problem: problem, repair: "entry removed (the file is read again)",
                                              key: Array(key)))
            }
            guard let (entry, trailing) = StatEntry.decode(value) else { bad("the entry does not decode"); return true }
            if key.first == 0 {
                guard key.count == 17, !trailing.isEmpty, ContentHash.of(trailing).bytes.elementsEqual(key.dropFirst()) else {
                    bad("a long path's key is not its path's hash")
                    return true
                }
            } else if key.isEmpty || !trailing.isEmpty {
                bad("a short path's entry carries a path of its own")
                return true
            }
            if let vouch = entry.vouch {
                // The count only grows: a vouch past it came from another store.
                guard vouch.removals <= removals else { bad("vouches at removal \(vouch.removals), past the store's \(removals)"); return true }
                if vouch.removals == removals && vouch.specs != noThumbnails { vouched.insert(entry.content) }
                if let words, vouchesForWords(entry, words) { vouchedWords.insert(entry.content) }
            }
            live.insert(entry.content)
            return true
        }
        return (live, vouched, vouchedWords)
    }

    /// Whether `entry` vouches for its content's words under a stamp the index holds valid, for
    /// a type that has words (a type without them is vouched for too: there is nothing to read).
    private static func vouchesForWords(_ entry: StatEntry, _ words: WordsVouches) -> Bool {
        guard let vouch = entry.vouch, vouch.words != 0, words.valid.contains(vouch.words), let type = entry.type else { return false }
        return words.typeHasWords(type.identifier)
    }

    /// The entries whose vouch holds, for contents of `unstored` or whose words are `unindexed`,
    /// as violations.
    private static func reportVouches(for unstored: Set<ContentHash>, words unindexed: Set<ContentHash>, _ words: WordsVouches?, _ h: Handles,
                                      _ txn: borrowing Transaction, _ report: inout IntegrityReport) throws {
        let removals = try removalCount(h, txn)
        try txn.forEach(h.files) { key, value in
            guard let (entry, _) = StatEntry.decode(value), let vouch = entry.vouch else { return true }
            let problem: String
            if vouch.removals == removals, vouch.specs != noThumbnails, unstored.contains(entry.content) {
                problem = "vouches for thumbnails of its content, none of which is stored"
            } else if let words, unindexed.contains(entry.content), vouchesForWords(entry, words) {
                problem = "vouches for its content's words, which the index does not hold"
            } else {
                return true
            }
            report.found(IntegrityFinding(database: Name.files, record: printable(key), problem: problem,
                                          repair: "entry removed (the file is read again)", key: Array(key)))
            return true
        }
    }

    /// The stamp of a plan without thumbnails (a type none is made of).
    private static let noThumbnails = StatVouch.SpecStamp().value

    /// A stat entry's key as a report names it.
    private static func printable(_ key: some Collection<UInt8>) -> String {
        key.first == 0 ? "(long path) " + hexText(key.dropFirst()) : String(decoding: key, as: UTF8.self)
    }

    /// Why a thumbnail's header and image disagree with its key, or nil.
    static func disagreement(_ key: ThumbnailKey, _ header: ThumbnailHeader, _ image: UnsafeRawBufferPointer) -> String? {
        if header.kind != key.variant.kind { return "the record says \(header.kind), its key \(key.variant.kind)" }
        guard header.pixelWidth >= 1, header.pixelHeight >= 1, header.pixelWidth <= key.boxWidth, header.pixelHeight <= key.boxHeight else {
            return "\(header.pixelWidth)×\(header.pixelHeight) pixels do not fit the key's \(key.boxWidth)×\(key.boxHeight) box"
        }
        switch header.encoding {
        case .png where !image.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]): return "the PNG it says does not start as one"
        case .jpeg where !image.starts(with: [0xFF, 0xD8, 0xFF]): return "the JPEG it says does not start as one"
        case .rgba8 where image.count != Int(header.pixelWidth) * Int(header.pixelHeight) * 4:
            return "\(image.count) bytes for \(header.pixelWidth)×\(header.pixelHeight) RGBA pixels"
        default: return nil
        }
    }

    /// Removes what `report`'s violations name (nothing else), in one write transaction; how many
    /// records went.
    public func repair(_ report: IntegrityReport) throws(StoreError) -> Int {
        let byDatabase = Dictionary(grouping: report.findings, by: \.database)
        return try writing("repair") { h, txn in
            var removed = 0
            for (name, findings) in byDatabase {
                let database: Database
                switch name {
                case Name.files: database = h.files
                case Name.thumbnails: database = h.thumbnails
                case Name.access: database = h.access
                case Name.failures: database = h.failures
                case Name.uploads: database = h.uploads
                default: continue
                }
                for finding in findings where try txn.delete(database, key: finding.key) {
                    removed += 1
                    // A thumbnail's stamp and queued upload go with it.
                    if name == Name.thumbnails {
                        _ = try txn.delete(h.access, key: finding.key)
                        _ = try txn.delete(h.uploads, key: finding.key)
                        try noteRemoval(h, txn)
                    }
                }
            }
            return removed
        }
    }
}
