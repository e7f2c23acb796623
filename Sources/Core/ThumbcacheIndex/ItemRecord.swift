/// How a file looked when it was indexed: a re-warm skips files whose state is unchanged.
package struct IndexedFileState: Sendable, Hashable {
    package var size: UInt64
    package var modificationTime: Int64
    /// Changes with extended attributes (tags, comments) as well as content.
    package var changeTime: Int64
    package var inode: UInt64
    package var device: UInt64

    package init(size: UInt64, modificationTime: Int64, changeTime: Int64, inode: UInt64, device: UInt64) {
        self.size = size
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.inode = inode
        self.device = device
    }

    /// This state, marked as known only in part: no real stat has this change time, so the next
    /// warm finds the file changed and indexes it again.
    package var provisional: IndexedFileState {
        IndexedFileState(size: size, modificationTime: modificationTime, changeTime: Self.provisionalChangeTime, inode: inode, device: device)
    }

    package var isProvisional: Bool { changeTime == Self.provisionalChangeTime }

    static let provisionalChangeTime = Int64.min
}

/// One item as stored under its number in the `items` database.
///
/// Layout (version 1): version · kind · flags · identifier · [domain] · [contentURL] ·
/// [expiration] · [content hash] · [file state] · own attributes · overlay attributes.
/// Strings are varint length + UTF-8; attributes are id (varint) · type · payload.
/// The overlay (files only) holds the attributes of app items whose contentURL is this file.
struct ItemRecord: Sendable, Hashable {
    enum Kind: UInt8, Sendable { case file = 1, app = 2 }

    var kind: Kind
    /// A file's absolute path, or the app item's unique identifier.
    var identifier: String
    var domain: String?
    /// For app items: the path of the file the item describes.
    var contentURL: String?
    var expiration: Double?
    var contentHash: [UInt8]?
    var fileState: IndexedFileState?
    var attributes: [UInt16: AttributeValue]
    var overlay: [UInt16: AttributeValue] = [:]

    static let version: UInt8 = 1

    /// The attributes a query sees: the item's own, with the overlay's winning.
    var effectiveAttributes: [UInt16: AttributeValue] {
        overlay.isEmpty ? attributes : attributes.merging(overlay) { _, app in app }
    }

    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        RecordCoding.header(&out, kind: kind, identifier: identifier, domain: domain, contentURL: contentURL, expiration: expiration,
                            contentHash: contentHash, fileState: fileState)
        RecordCoding.attributes(&out, attributes)
        RecordCoding.attributes(&out, overlay)
        return out
    }

    /// Decodes a stored record; nil if it is malformed or of another version.
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard let v = RecordView(bytes) else { return nil }
        var r = RecordReader(bytes)
        r.offset = v.attributesOffset
        guard let own = r.attributes(), let over = r.attributes() else { return nil }
        self.init(kind: v.kind, identifier: v.identifierString, domain: v.domain.map(Self.string),
                  contentURL: v.contentURL.map(Self.string), expiration: v.expiration, contentHash: v.contentHash.map(Array.init),
                  fileState: v.fileState, attributes: own, overlay: over)
    }

    private static func string(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

    init(kind: Kind, identifier: String, domain: String? = nil, contentURL: String? = nil, expiration: Double? = nil,
         contentHash: [UInt8]? = nil, fileState: IndexedFileState? = nil, attributes: [UInt16: AttributeValue], overlay: [UInt16: AttributeValue] = [:]) {
        self.kind = kind
        self.identifier = identifier
        self.domain = domain
        self.contentURL = contentURL
        self.expiration = expiration
        self.contentHash = contentHash
        self.fileState = fileState
        self.attributes = attributes
        self.overlay = overlay
    }
}

/// Which optional fields a record holds.
struct RecordFlags: OptionSet {
    let rawValue: UInt8
    static let domain = RecordFlags(rawValue: 1)
    static let contentURL = RecordFlags(rawValue: 2)
    static let expiration = RecordFlags(rawValue: 4)
    static let hash = RecordFlags(rawValue: 8)
    static let fileState = RecordFlags(rawValue: 16)
}

/// A stored record read in place: the header fields as views, and one attribute at a time
/// without decoding the rest or making strings for ASCII comparisons. ``ItemRecord`` decodes
/// the whole record through it.
struct RecordView {
    let bytes: UnsafeRawBufferPointer
    private(set) var kind: ItemRecord.Kind = .app
    private(set) var identifier = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var domain: UnsafeRawBufferPointer?
    private(set) var contentURL: UnsafeRawBufferPointer?
    private(set) var expiration: Double?
    private(set) var contentHash: UnsafeRawBufferPointer?
    private(set) var fileState: IndexedFileState?
    /// Where the own attribute section starts (the overlay section follows it).
    private(set) var attributesOffset = 0

    init?(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        var r = RecordReader(bytes)
        guard r.u8() == ItemRecord.version, let k = r.u8().flatMap(ItemRecord.Kind.init(rawValue:)), let f = r.u8(),
              let id = r.stringBytes() else { return nil }
        let flags = RecordFlags(rawValue: f)
        kind = k
        identifier = id
        if flags.contains(.domain) { guard let d = r.stringBytes() else { return nil }; domain = d }
        if flags.contains(.contentURL) { guard let u = r.stringBytes() else { return nil }; contentURL = u }
        if flags.contains(.expiration) { guard let e = r.u64() else { return nil }; expiration = Double(bitPattern: e) }
        if flags.contains(.hash) { guard let h = r.bytes(16) else { return nil }; contentHash = h }
        if flags.contains(.fileState) {
            guard let size = r.u64(), let m = r.u64(), let c = r.u64(), let ino = r.u64(), let dev = r.u64() else { return nil }
            fileState = IndexedFileState(size: size, modificationTime: Int64(bitPattern: m), changeTime: Int64(bitPattern: c), inode: ino, device: dev)
        }
        attributesOffset = r.offset
    }

    var identifierString: String { String(decoding: identifier, as: UTF8.self) }

    /// The file path the record stands for: a file's own, or an app item's contentURL.
    var path: String? { kind == .file ? identifierString : contentURL.map { String(decoding: $0, as: UTF8.self) } }

    /// Whether app items' attributes are merged into this file's (its overlay section has any).
    var hasOverlay: Bool {
        var r = RecordReader(bytes)
        r.offset = attributesOffset
        _ = r.findInSection(.max)  // read past the own section
        return (r.varint() ?? 0) > 0
    }

    /// The payload of `attribute` as the item shows it (overlay first), with its type.
    func find(_ attribute: UInt16) -> (type: AttributeType, payload: UnsafeRawBufferPointer)? {
        var r = RecordReader(bytes)
        r.offset = attributesOffset
        let own = r.findInSection(attribute)
        let overlay = r.findInSection(attribute)
        return overlay ?? own
    }

    /// Calls `body` with each UTF-8 string of a string or list attribute until it returns true.
    func anyString(_ attribute: UInt16, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard let (type, payload) = find(attribute) else { return false }
        var r = RecordReader(payload)
        switch type {
        case .string: return r.stringBytes().map(body) ?? false
        case .strings:
            guard let n = r.varint() else { return false }
            for _ in 0..<n { if let s = r.stringBytes(), body(s) { return true } }
            return false
        default: return false
        }
    }

    /// The UTF-8 strings of a string or list attribute, one at a time (no closure: a query's
    /// check of many records reads them in a loop).
    func strings(_ attribute: UInt16) -> StringValues {
        guard let (type, payload) = find(attribute) else { return StringValues(reader: RecordReader(UnsafeRawBufferPointer(start: nil, count: 0)), remaining: 0) }
        var r = RecordReader(payload)
        switch type {
        case .string: return StringValues(reader: r, remaining: 1)
        case .strings:
            let count = Int(r.varint() ?? 0)  // read before the reader is handed on, past the count
            return StringValues(reader: r, remaining: count)
        default: return StringValues(reader: r, remaining: 0)
        }
    }

    struct StringValues: IteratorProtocol {
        var reader: RecordReader
        var remaining: Int

        mutating func next() -> UnsafeRawBufferPointer? {
            guard remaining > 0 else { return nil }
            remaining -= 1
            guard let s = reader.stringBytes() else { remaining = 0; return nil }
            return s
        }
    }

    func number(_ attribute: UInt16) -> Double? {
        guard let (type, payload) = find(attribute), type == .number || type == .date, payload.count >= 8 else { return nil }
        var r = RecordReader(payload)
        return r.u64().map { Double(bitPattern: $0) }
    }
}

enum RecordCoding {
    static func u64(_ out: inout [UInt8], _ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    static func string(_ out: inout [UInt8], _ s: String) {
        Varint.append(&out, UInt64(s.utf8.count))
        out.append(contentsOf: s.utf8)
    }

    /// Everything before the attributes: version, kind, flags and the fields the flags announce.
    static func header(_ out: inout [UInt8], kind: ItemRecord.Kind, identifier: String, domain: String? = nil, contentURL: String? = nil,
                       expiration: Double? = nil, contentHash: [UInt8]? = nil, fileState: IndexedFileState? = nil) {
        var flags: RecordFlags = []
        if domain != nil { flags.insert(.domain) }
        if contentURL != nil { flags.insert(.contentURL) }
        if expiration != nil { flags.insert(.expiration) }
        if contentHash != nil { flags.insert(.hash) }
        if fileState != nil { flags.insert(.fileState) }
        out.append(ItemRecord.version)
        out.append(kind.rawValue)
        out.append(flags.rawValue)
        string(&out, identifier)
        if let domain { string(&out, domain) }
        if let contentURL { string(&out, contentURL) }
        if let expiration { u64(&out, expiration.bitPattern) }
        if let contentHash { out.append(contentsOf: contentHash.prefix(16)); out.append(contentsOf: repeatElement(0, count: max(0, 16 - contentHash.count))) }
        if let s = fileState {
            u64(&out, s.size)
            u64(&out, UInt64(bitPattern: s.modificationTime))
            u64(&out, UInt64(bitPattern: s.changeTime))
            u64(&out, s.inode)
            u64(&out, s.device)
        }
    }

    /// A section of attributes in any order (readers look each up by number): the count, then
    /// each attribute (see ``attribute(_:_:_:)``).
    static func attributes(_ out: inout [UInt8], _ attributes: [UInt16: AttributeValue]) {
        Varint.append(&out, UInt64(attributes.count))
        for (id, value) in attributes { attribute(&out, id, value) }
    }

    /// One attribute: number, type, and the length-prefixed payload.
    static func attribute(_ out: inout [UInt8], _ id: UInt16, _ value: AttributeValue) {
        Varint.append(&out, UInt64(id))
        out.append(value.type.rawValue)
        switch value {
        case .string(let s):
            let n = s.utf8.count
            Varint.append(&out, UInt64(Varint.size(UInt64(n)) + n))
            string(&out, s)
        case .strings(let list):
            var size = Varint.size(UInt64(list.count))
            for s in list { size += Varint.size(UInt64(s.utf8.count)) + s.utf8.count }
            Varint.append(&out, UInt64(size))
            Varint.append(&out, UInt64(list.count))
            for s in list { string(&out, s) }
        case .number(let n), .date(let n):
            out.append(8)
            u64(&out, n.bitPattern)
        }
    }
}

struct RecordReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u64() -> UInt64? {
        guard bytes.count - offset >= 8 else { return nil }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func varint() -> UInt64? { Varint.read(bytes, &offset) }

    mutating func bytes(_ n: Int) -> UnsafeRawBufferPointer? {
        guard n >= 0, bytes.count - offset >= n else { return nil }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n])
    }

    mutating func stringBytes() -> UnsafeRawBufferPointer? {
        guard let n = varint(), n <= UInt64(bytes.count) else { return nil }
        return bytes(Int(n))
    }

    mutating func string() -> String? { stringBytes().map { String(decoding: $0, as: UTF8.self) } }

    /// Skips one attribute section, returning the payload of `attribute` if it is in it.
    mutating func findInSection(_ attribute: UInt16) -> (AttributeType, UnsafeRawBufferPointer)? {
        guard let n = varint() else { return nil }
        var found: (AttributeType, UnsafeRawBufferPointer)?
        for _ in 0..<n {
            guard let id = varint(), let t = u8().flatMap(AttributeType.init(rawValue:)), let payload = stringBytes() else { return found }
            if id == UInt64(attribute) { found = (t, payload) }
        }
        return found
    }

    mutating func attributes() -> [UInt16: AttributeValue]? {
        guard let n = varint() else { return nil }
        var result: [UInt16: AttributeValue] = [:]
        for _ in 0..<n {
            guard let id = varint(), id <= UInt64(UInt16.max), let t = u8().flatMap(AttributeType.init(rawValue:)),
                  let payload = stringBytes() else { return nil }
            var p = RecordReader(payload)
            let value: AttributeValue?
            switch t {
            case .string: value = p.string().map(AttributeValue.string)
            case .strings:
                var list: [String] = []
                let count = p.varint() ?? 0
                for _ in 0..<count { if let s = p.string() { list.append(s) } }
                value = .strings(list)
            case .number: value = p.u64().map { .number(Double(bitPattern: $0)) }
            case .date: value = p.u64().map { .date(Double(bitPattern: $0)) }
            }
            if let value { result[UInt16(id)] = value }
        }
        return result
    }
}
