import CThumbcacheXXHash

/// The keys of the index's databases (Docs/FORMAT.md).
extension MetadataIndex {
    enum Namespace: UInt8 { case file = 0x66, app = 0x61 }

    /// A key for an identifier or path: its bytes, or for long ones a prefix and a hash of the
    /// whole (LMDB keys are at most 511 bytes); records hold the full text to compare.
    static func textKey(_ text: String) -> [UInt8] {
        var key: [UInt8] = []
        appendTextKey(text, to: &key)
        return key
    }

    static func appendTextKey(_ text: String, to key: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.count > maxPlainKeyBytes else { return key.append(contentsOf: bytes) }
            var high: UInt64 = 0, low: UInt64 = 0
            cxxh_oneshot(bytes.baseAddress, bytes.count, &high, &low)
            key.append(contentsOf: bytes[0..<hashedKeyTextBytes])
            key.append(0xFF)
            withUnsafeBytes(of: high.bigEndian) { key.append(contentsOf: $0) }
            withUnsafeBytes(of: low.bigEndian) { key.append(contentsOf: $0) }
        }
    }

    /// Longer identifiers and paths have hashed keys: their first ``hashedKeyTextBytes`` bytes,
    /// 0xFF and the 16-byte XXH3-128 of the whole.
    static let maxPlainKeyBytes = 400
    static let hashedKeyTextBytes = 384

    static func idKey(_ ns: Namespace, _ identifier: String) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(1 + min(identifier.utf8.count, 1 + hashedKeyTextBytes + 16))
        key.append(ns.rawValue)
        appendTextKey(identifier, to: &key)
        return key
    }

    /// The `ids` key that names `record`'s item.
    static func idKey(of record: ItemRecord) -> [UInt8] {
        idKey(record.kind == .file ? .file : .app, record.identifier)
    }

    static func itemNumberBytes(_ itemNumber: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        Postings.appendBE(&out, itemNumber)
        return out
    }

    static func itemNumber(_ value: UnsafeRawBufferPointer) -> UInt32? {
        value.count >= 4 ? Postings.readBE(value, at: 0) : nil
    }

    static func linkKey(_ path: String, _ itemNumber: UInt32) -> [UInt8] { textKey(path) + [0] + itemNumberBytes(itemNumber) }
    static func domainKey(_ domain: String, _ itemNumber: UInt32) -> [UInt8] { Array(domain.utf8.prefix(400)) + [0] + itemNumberBytes(itemNumber) }
    static func expiryKey(_ date: Double, _ itemNumber: UInt32) -> [UInt8] {
        let k = NumericKey.key(date)
        return itemNumberBytes(UInt32(k >> 32)) + itemNumberBytes(UInt32(k & 0xFFFF_FFFF)) + itemNumberBytes(itemNumber)
    }
    static func hashKey(_ hash: [UInt8], _ itemNumber: UInt32) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(20)
        key.append(contentsOf: hash.prefix(16))
        withUnsafeBytes(of: itemNumber.bigEndian) { key.append(contentsOf: $0) }
        return key
    }
}
