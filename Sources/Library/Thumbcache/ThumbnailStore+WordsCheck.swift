import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheStore

extension ThumbnailStore {
    /// ``check()``, with each stat entry's vouch for its words held to `index` too: a vouch under
    /// a stamp the index holds valid, for a type with words, whose content's text the index does
    /// not hold is a violation (a re-warm would never read those words again). Without an index,
    /// the store alone.
    package func check(heldTo index: MetadataIndex?, types: ContentTypeRegistry) throws -> IntegrityReport {
        guard let index, let before = try? index.wordsStamps() else { return try check() }
        let words = WordsVouches(valid: Set(before.valid.map { $0 ^ IndexFeeder.catalogueStamp }),
                                 typeHasWords: { IndexFeeder.wordsFormat(of: ContentType(rawValue: $0), types: types) != nil },
                                 unindexed: { contents in
                                     let list = Array(contents)
                                     guard let held = try? index.hasTexts(contents: list.map(\.bytes)) else { return [] }
                                     return Set(zip(list, held).filter { !$0.1 }.map(\.0))
                                 })
        let report = try check(words: words)
        // A text removed meanwhile took every stamp with it, so what was found may be that removal's.
        guard (try? index.wordsStamps())?.removals == before.removals else { return try check() }
        return report
    }
}
