/// The attributes one file batch uses, by name: the built-in ones and the batch's app
/// attributes (numbered before the batch's items are read, see `indexFiles`).
///
/// A lookup hashes the name's UTF-8 bytes with XXH3 in a ``TermTable`` instead of hashing a Swift
/// `String`: a bulk load looks up about ten names per file.
struct AttributeTable: Sendable {
    private var names = TermTable()
    private var infos: [AttributeInfo] = []

    /// The built-in attributes.
    init() {
        for info in Schema.builtIn { add(info) }
    }

    mutating func add(_ info: AttributeInfo) {
        let n = Int(Self.withBytes(info.name) { names.intern($0) })
        if n == infos.count { infos.append(info) } else { infos[n] = info }
    }

    func info(_ name: String) -> AttributeInfo? {
        Self.withBytes(name) { names.find($0) }.map { infos[Int($0)] }
    }

    /// Calls `body` with each attribute of file `f` as it is stored: `kMDItemPath` left out (the
    /// path is the item's identifier), whole-number attributes rounded, and `kMDItemFSName`
    /// defaulting to the path's last component. Every name must be in the table.
    func forEachAttribute(of f: FileItem, _ body: (AttributeInfo, AttributeValue) -> Void) {
        var named = false
        for (name, value) in f.attributes {
            guard let info = info(name), info.id != Schema.pathID else { continue }
            if info.id == Schema.fsNameID { named = true }
            if info.integral, case .number(let n) = value { body(info, .number(n.rounded())) } else { body(info, value) }
        }
        if !named { body(Schema.builtInTable[Int(Schema.fsNameID)]!, .string(String(f.path.split(separator: "/").last ?? ""))) }
    }

    /// The attributes of file `f` by number (see ``forEachAttribute(of:_:)``).
    func attributes(of f: FileItem) -> [UInt16: AttributeValue] {
        var out: [UInt16: AttributeValue] = [:]
        out.reserveCapacity(f.attributes.count + 1)
        forEachAttribute(of: f) { info, value in out[info.id] = value }
        return out
    }

    private static func withBytes<R>(_ name: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let r = name.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return r }
        return Array(name.utf8).withUnsafeBytes(body)
    }
}
