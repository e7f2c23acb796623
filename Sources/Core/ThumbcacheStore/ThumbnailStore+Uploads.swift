/// The write-behind queue of thumbnails bound for a remote tier (Docs/FORMAT.md, "uploads").
extension ThumbnailStore {
    /// Up to `limit` queued uploads in key order, after `key` (exclusive) if given, with the
    /// attributes queued with each.
    package func queuedUploads(after key: ThumbnailKey? = nil, limit: Int) throws(StoreError) -> [(key: ThumbnailKey, attributes: [UInt8])] {
        let start = key?.bytes ?? []
        return try reading("list queued uploads") { h, txn in
            var found: [(ThumbnailKey, [UInt8])] = []
            try start.withUnsafeBytes { from in
                try txn.forEach(h.uploads, from: start.isEmpty ? nil : from) { k, value in
                    if !start.isEmpty && k.elementsEqual(start) { return true }
                    if let parsed = ThumbnailKey(bytes: k) { found.append((parsed, Array(value))) }
                    return found.count < limit
                }
            }
            return found
        }
    }

    /// How many thumbnails wait for upload.
    package func queuedUploadCount() throws(StoreError) -> Int {
        try reading("count queued uploads") { h, txn in try txn.count(h.uploads) }
    }
}
