import Synchronization
import ThumbcacheLMDB

/// Attribute names ↔ numbers and types: the built-in Spotlight attributes, plus app attributes
/// numbered on first use and recorded in the `meta` database (`attr:NAME` → id, type).
final class AttributeCatalog: Sendable {
    private struct Known {
        var byName: [String: AttributeInfo] = Schema.byName
        var byID: [UInt16: AttributeInfo] = Schema.byID
    }
    private let known = Mutex(Known())
    static let keyPrefix = Array("attr:".utf8)
    static let nextKey = Array("attr-next".utf8)

    func info(named name: String) -> AttributeInfo? { known.withLock { $0.byName[name] } }
    func info(id: UInt16) -> AttributeInfo? { known.withLock { $0.byID[id] } }

    /// Reads app attributes recorded by any process.
    func reload(_ txn: borrowing Transaction, meta: Database) throws {
        var found: [AttributeInfo] = []
        try Self.keyPrefix.withUnsafeBytes { start in
            try txn.forEach(meta, from: start) { key, value in
                guard key.starts(with: Self.keyPrefix) else { return false }
                if let info = Self.decode(name: String(decoding: key.dropFirst(Self.keyPrefix.count), as: UTF8.self), value: value) { found.append(info) }
                return true
            }
        }
        known.withLock { k in
            for info in found {
                k.byName[info.name] = info
                k.byID[info.id] = info
            }
        }
    }

    /// An app attribute from its stored value (id u16 LE, type u8).
    static func decode(name: String, value: UnsafeRawBufferPointer) -> AttributeInfo? {
        guard value.count >= 3, let type = AttributeType(rawValue: value[2]) else { return nil }
        return app(UInt16(value[0]) | UInt16(value[1]) << 8, name, type)
    }

    static func app(_ id: UInt16, _ name: String, _ type: AttributeType) -> AttributeInfo {
        AttributeInfo(id: id, name: name, type: type, policy: Schema.dynamicPolicy(type), isText: false, integral: false)
    }

    /// The attribute `name` for a value of `type`, numbering it in this write transaction if it
    /// is new. `pending` holds numbers given out (or first seen) in the transaction, published by
    /// ``publish(_:)`` only once it commits.
    func resolve(_ name: String, type: AttributeType, _ txn: borrowing Transaction, meta: Database,
                 pending: inout [String: AttributeInfo], indexPath: String) throws -> AttributeInfo {
        let key = Self.keyPrefix + Array(name.utf8)
        var found = info(named: name) ?? pending[name]
        if found == nil, let stored = try txn.get(meta, key: key) {
            // Another process numbered it since this one loaded the catalog.
            found = Self.decode(name: name, value: stored)
            pending[name] = found
        }
        if let found {
            guard Schema.compatible(found.type, type) else {
                throw IndexError(path: indexPath, reason: .attributeType(name: name, expected: found.type, got: type))
            }
            return found
        }
        var next = Schema.firstDynamicID
        if let v = try txn.get(meta, key: Self.nextKey), v.count >= 2 { next = UInt16(v[0]) | UInt16(v[1]) << 8 }
        let info = Self.app(next, name, type)
        try txn.put(meta, key: key, value: [UInt8(next & 0xFF), UInt8(next >> 8), type.rawValue])
        try txn.put(meta, key: Self.nextKey, value: [UInt8((next + 1) & 0xFF), UInt8((next + 1) >> 8)])
        pending[name] = info
        return info
    }

    func publish(_ pending: [String: AttributeInfo]) {
        guard !pending.isEmpty else { return }
        known.withLock { k in
            for info in pending.values {
                k.byName[info.name] = info
                k.byID[info.id] = info
            }
        }
    }
}
