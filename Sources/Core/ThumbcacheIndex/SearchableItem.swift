/// An item an app adds to the index, after Core Spotlight's `CSSearchableItem`.
public struct SearchableItem: Sendable, Hashable {
    /// Unique among the app items of the index; indexing an item with a known identifier replaces it.
    public var uniqueIdentifier: String
    /// Groups items for deletion: deleting domain `a.b` deletes `a.b` and `a.b.c`, not `a.bc`.
    public var domainIdentifier: String?
    /// The absolute path of a file this item describes. While that file is indexed, the two are
    /// one result carrying both sets of attributes, the app's winning where both set one.
    public var contentURL: String?
    /// Seconds since 1970; ``MetadataIndex/sweepExpired(now:)`` deletes the item after it.
    public var expirationDate: Double?
    /// Attribute name → value, e.g. `kMDItemTitle`.
    public var attributes: [String: AttributeValue]

    public init(uniqueIdentifier: String, domainIdentifier: String? = nil, contentURL: String? = nil,
                expirationDate: Double? = nil, attributes: [String: AttributeValue] = [:]) {
        self.uniqueIdentifier = uniqueIdentifier
        self.domainIdentifier = domainIdentifier
        self.contentURL = contentURL
        self.expirationDate = expirationDate
        self.attributes = attributes
    }
}

/// A file as `warm` indexes it: where it is, how it looked, its content hash, its attributes.
package struct FileItem: Sendable, Hashable {
    /// Absolute, canonical path.
    package var path: String
    package var state: IndexedFileState
    /// XXH3-128 of the bytes (16 bytes), which finds the file's thumbnails and recognises a
    /// renamed file.
    package var contentHash: [UInt8]?
    /// Attributes; `kMDItemPath` and `kMDItemFSName` come from the path.
    package var attributes: [String: AttributeValue]

    package init(path: String, state: IndexedFileState, contentHash: [UInt8]?, attributes: [String: AttributeValue]) {
        self.path = path
        self.state = state
        self.contentHash = contentHash
        self.attributes = attributes
    }
}

/// What indexing one file did.
package enum FileIndexOutcome: Sendable, Hashable {
    /// New in the index.
    case added
    /// Known at this path; its attributes were replaced.
    case updated
    /// A file with the same content at a path that no longer exists: the item moved here,
    /// keeping its number and what apps attached to it by identifier.
    case moved(from: String)
    /// Known at this path and unchanged.
    case unchanged
}

/// A group of changes applied in one transaction, with the app's client state.
public struct IndexBatch: Sendable {
    enum Operation: Sendable {
        case index([SearchableItem])
        case deleteIdentifiers([String])
        case deleteDomains([String])
        case deleteAllAppItems
    }
    var operations: [Operation] = []

    public init() {}

    public mutating func index(_ items: [SearchableItem]) { operations.append(.index(items)) }
    public mutating func deleteItems(identifiers: [String]) { operations.append(.deleteIdentifiers(identifiers)) }
    public mutating func deleteItems(domains: [String]) { operations.append(.deleteDomains(domains)) }
    public mutating func deleteAllAppItems() { operations.append(.deleteAllAppItems) }
}

/// One search result.
public struct SearchResult: Sendable, Hashable {
    /// The item's number in this index (stable while the item exists; a moved file keeps it).
    public var itemNumber: UInt32
    /// The file's path, for file items and app items merged with or pointing at a file.
    public var path: String?
    /// The app item's identifier (nil for a file no app item describes).
    public var identifier: String?
    public var domainIdentifier: String?
    /// XXH3-128 of the file's bytes, which names its thumbnails in the thumbnail store.
    public var contentHash: [UInt8]?
    /// Attributes asked for (or all of them, for ``MetadataIndex/item(path:)``).
    public var attributes: [String: AttributeValue]
    /// How well the item matched a query's words (BM25 of the words inside it, plus a plain word
    /// in its name or title); nil for a query without words.
    public var score: Double?
    /// Where the query's words stand in the file's text, when ``SearchOptions/snippets`` asks.
    public var snippet: TextSnippet?

    /// What `search` prints: the path, else the identifier.
    public var displayName: String { path ?? identifier ?? "#\(itemNumber)" }
}
