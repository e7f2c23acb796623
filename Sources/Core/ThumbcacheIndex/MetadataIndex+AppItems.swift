import ThumbcacheLMDB

/// App items (``SearchableItem``): adding, replacing, deleting by identifier, domain or expiry, and
/// keeping the overlay of the file an item describes.
extension MetadataIndex {
    /// Adds or replaces app items (by unique identifier).
    public func index(_ items: [SearchableItem]) throws(IndexError) {
        var batch = IndexBatch()
        batch.index(items)
        try perform(batch)
    }

    public func deleteItems(identifiers: [String]) throws(IndexError) {
        var batch = IndexBatch()
        batch.deleteItems(identifiers: identifiers)
        try perform(batch)
    }

    /// Deletes the app items of these domains and their subdomains.
    public func deleteItems(domains: [String]) throws(IndexError) {
        var batch = IndexBatch()
        batch.deleteItems(domains: domains)
        try perform(batch)
    }

    public func deleteAllAppItems() throws(IndexError) {
        var batch = IndexBatch()
        batch.deleteAllAppItems()
        try perform(batch)
    }

    /// Applies `batch` and stores `clientState` for `client` in the same transaction: after a
    /// crash, ``clientState(client:)`` tells exactly which batches landed.
    public func perform(_ batch: IndexBatch, clientState: [UInt8]? = nil, client: String = "") throws(IndexError) {
        try write { txn, session in
            for op in batch.operations {
                switch op {
                case .index(let list): for item in list { try indexApp(item, txn, &session) }
                case .deleteIdentifiers(let list):
                    for id in list { if let itemNumber = try lookup(.app, id, txn) { try deleteApp(itemNumber, txn, &session) } }
                case .deleteDomains(let list):
                    for domain in list { for itemNumber in try appsInDomain(domain, txn) { try deleteApp(itemNumber, txn, &session) } }
                case .deleteAllAppItems:
                    for itemNumber in try allAppItems(txn) { try deleteApp(itemNumber, txn, &session) }
                }
            }
            if let clientState {
                try txn.put(meta, key: Self.clientStatePrefix + Array(client.utf8), value: clientState)
            }
        }
    }

    /// Deletes app items whose expiration date is before `now` (seconds since 1970); returns how many.
    @discardableResult
    public func sweepExpired(now: Double) throws(IndexError) -> Int {
        try write { txn, session in
            var itemNumbers: [UInt32] = []
            let limit = NumericKey.key(now)
            try txn.forEach(expiry) { key, _ in
                guard key.count == 12 else { return true }
                let k = UInt64(Postings.readBE(key, at: 0)) << 32 | UInt64(Postings.readBE(key, at: 4))
                guard k < limit else { return false }
                itemNumbers.append(Postings.readBE(key, at: 8))
                return true
            }
            for itemNumber in itemNumbers { try deleteApp(itemNumber, txn, &session) }
            return itemNumbers.count
        }
    }

    /// Recomputes the overlay of the file at `path` from the app items describing it.
    func refreshOverlay(_ path: String, _ txn: borrowing Transaction) throws {
        guard let itemNumber = try lookup(.file, path, txn), var r = try record(itemNumber, txn) else { return }
        var overlay: [UInt16: AttributeValue] = [:]
        for app in try linkedApps(path, txn).sorted() {
            if let a = try record(app, txn) { overlay.merge(a.attributes) { _, new in new } }
        }
        guard overlay != r.overlay else { return }
        r.overlay = overlay
        try putRecord(itemNumber, r, txn)
    }

    func indexApp(_ item: SearchableItem, _ txn: borrowing Transaction, _ session: inout WriteSession) throws {
        guard !item.uniqueIdentifier.isEmpty else {
            throw IndexError(path: directory, reason: .invalidItem("an app item needs a non-empty unique identifier"))
        }
        let attributes = try resolve(item.attributes, txn, &session)
        let existing = try lookup(.app, item.uniqueIdentifier, txn)
        let itemNumber = existing ?? session.allocate()
        let old = try existing.flatMap { try record($0, txn) }
        var affected = [itemNumber]
        for url in [old?.contentURL, item.contentURL].compactMap({ $0 }) {
            if let f = try lookup(.file, url, txn) { affected.append(f) }
        }
        let before = try snapshot(affected, txn, session)
        if let old { try removeAppKeys(itemNumber, old, txn) }
        if existing == nil { try txn.put(ids, key: Self.idKey(.app, item.uniqueIdentifier), value: Self.itemNumberBytes(itemNumber)) }
        let r = ItemRecord(kind: .app, identifier: item.uniqueIdentifier, domain: item.domainIdentifier, contentURL: item.contentURL,
                           expiration: item.expirationDate, attributes: attributes)
        try putRecord(itemNumber, r, txn)
        if let d = item.domainIdentifier { try txn.put(domains, key: Self.domainKey(d, itemNumber), value: []) }
        if let e = item.expirationDate { try txn.put(expiry, key: Self.expiryKey(e, itemNumber), value: []) }
        if let url = item.contentURL {
            try txn.put(links, key: Self.linkKey(url, itemNumber), value: [])
            session.links = .some
        }
        for url in Set([old?.contentURL, item.contentURL].compactMap({ $0 })) { try refreshOverlay(url, txn) }
        try recordDiff(before, txn, &session)
    }

    private func removeAppKeys(_ itemNumber: UInt32, _ record: ItemRecord, _ txn: borrowing Transaction) throws {
        if let d = record.domain { try txn.delete(domains, key: Self.domainKey(d, itemNumber)) }
        if let e = record.expiration { try txn.delete(expiry, key: Self.expiryKey(e, itemNumber)) }
        if let url = record.contentURL { try txn.delete(links, key: Self.linkKey(url, itemNumber)) }
    }

    func deleteApp(_ itemNumber: UInt32, _ txn: borrowing Transaction, _ session: inout WriteSession) throws {
        guard let r = try record(itemNumber, txn), r.kind == .app else { return }
        var affected = [itemNumber]
        if let url = r.contentURL, let f = try lookup(.file, url, txn) { affected.append(f) }
        let before = try snapshot(affected, txn, session)
        try removeAppKeys(itemNumber, r, txn)
        try txn.delete(ids, key: Self.idKey(.app, r.identifier))
        try txn.delete(items, key: Self.itemNumberBytes(itemNumber))
        if let url = r.contentURL { try refreshOverlay(url, txn) }
        try recordDiff(before, txn, &session)
    }

    func appsInDomain(_ domain: String, _ txn: borrowing Transaction) throws -> [UInt32] {
        var itemNumbers: [UInt32] = []
        for prefix in [Array(domain.utf8) + [0], Array(domain.utf8) + [UInt8(ascii: ".")]] {
            try prefix.withUnsafeBytes { start in
                try txn.forEach(domains, from: start) { key, _ in
                    guard key.starts(with: prefix) else { return false }
                    // Exact domain: the key is domain · 0 · number; subdomains: any name after the dot.
                    if prefix.last == 0 && key.count != prefix.count + 4 { return true }
                    if key.count >= 5 { itemNumbers.append(Postings.readBE(key, at: key.count - 4)) }
                    return true
                }
            }
        }
        return itemNumbers
    }

    func allAppItems(_ txn: borrowing Transaction) throws -> [UInt32] {
        var itemNumbers: [UInt32] = []
        try [Namespace.app.rawValue].withUnsafeBytes { start in
            try txn.forEach(ids, from: start) { key, value in
                guard key.first == Namespace.app.rawValue else { return false }
                if let d = Self.itemNumber(value) { itemNumbers.append(d) }
                return true
            }
        }
        return itemNumbers
    }
}
