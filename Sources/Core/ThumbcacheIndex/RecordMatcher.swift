/// Decides one item from its stored record, read in place: the check for items the posting
/// lists leave unsure.
enum RecordMatcher {
    static func matches(_ plan: QueryPlan, _ view: RecordView, _ itemNumber: UInt32) -> Bool {
        switch plan {
        case .nothing: return false
        case .exists(let id):
            if id == Schema.allItemsID { return true }
            if id == Schema.pathID { return path(view) != nil }
            return view.find(id) != nil
        case .and(let list): return list.allSatisfy { matches($0, view, itemNumber) }
        case .or(let list): return list.contains { matches($0, view, itemNumber) }
        case .not(let inner): return !matches(inner, view, itemNumber)
        case .numeric(let info, let interval): return view.number(info.id).map(interval.contains) ?? false
        case .string(let info, let pattern): return view.anyString(info.id) { pattern.matches(utf8: $0) }
        case .stringOrder(let info, let op, let pattern):
            return view.anyString(info.id) { bytes in
                let value = pattern.foldValue(String(decoding: bytes, as: UTF8.self))
                let other = pattern.foldValue(pattern.literalText ?? pattern.source)
                switch op {
                case .less: return value < other
                case .lessOrEqual: return value <= other
                case .greater: return value > other
                case .greaterOrEqual: return value >= other
                case .equal: return value == other
                case .notEqual: return value != other
                }
            }
        case .path(let pattern): return path(view).map { pattern.matches(utf8: $0) } ?? false
        case .scope(let dirs):
            guard let p = path(view) else { return false }
            let s = String(decoding: p, as: UTF8.self)
            return dirs.contains { $0 == "/" || s.hasPrefix($0 + "/") }
        case .items(let set): return set.contains(itemNumber)
        // Resolved to `.items` before any record is checked.
        case .fullText: return false
        case .text(let term): return term.matches(view)
        }
    }

    /// The path of the item in `view`: a file's own, else an app item's kMDItemPath.
    static func path(_ view: RecordView) -> UnsafeRawBufferPointer? {
        if view.kind == .file { return view.identifier }
        var found: UnsafeRawBufferPointer?
        _ = view.anyString(Schema.pathID) { found = $0; return true }
        return found
    }
}
