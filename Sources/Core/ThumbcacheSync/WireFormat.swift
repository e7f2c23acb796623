/// Little-endian fields for the binary messages between thumbcache's processes (the worker
/// protocol, the daemon's session socket): integers, doubles, and strings and byte runs with their
/// length first.
package struct WireWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func uint8(_ v: UInt8) { bytes.append(v) }
    package mutating func uint32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
    package mutating func int64(_ v: Int64) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
    package mutating func int(_ v: Int) { int64(Int64(v)) }
    package mutating func double(_ v: Double) { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes += $0 } }
    package mutating func bool(_ v: Bool) { bytes.append(v ? 1 : 0) }
    package mutating func run(_ run: some Collection<UInt8>) {
        uint32(UInt32(run.count))
        bytes += run
    }
    /// ``run(_:)`` for an array: called from another module, the generic one finds `[UInt8]`'s
    /// conformances at run time by scanning every conformance record linked in (PERFORMANCE.md).
    package mutating func run(_ run: [UInt8]) {
        uint32(UInt32(run.count))
        bytes += run
    }
    package mutating func string(_ s: String) { run(s.utf8) }

    /// A flag, then the value if there is one.
    package mutating func optional<T>(_ value: T?, _ write: (inout WireWriter, T) -> Void) {
        bool(value != nil)
        if let value { write(&self, value) }
    }
}

/// Reads what ``WireWriter`` wrote; every read is nil past the end, never a crash: the bytes may
/// come from a process that is not trusted.
package struct WireReader {
    private var rest: ArraySlice<UInt8>
    /// Longest string or byte run accepted.
    private let longestRun: Int

    package init(_ bytes: ArraySlice<UInt8>, longestRun: Int = 1 << 20) {
        rest = bytes
        self.longestRun = longestRun
    }

    package var atEnd: Bool { rest.isEmpty }
    /// Bytes not read yet.
    package var remaining: Int { rest.count }

    package mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, rest.count >= n else { return nil }
        defer { rest = rest.dropFirst(n) }
        return rest.prefix(n)
    }
    package mutating func uint8() -> UInt8? { take(1)?.first }
    package mutating func uint32() -> UInt32? { take(4).map { $0.reversed().reduce(0) { $0 << 8 | UInt32($1) } } }
    package mutating func int64() -> Int64? { take(8).map { Int64(bitPattern: $0.reversed().reduce(0) { $0 << 8 | UInt64($1) }) } }
    package mutating func int() -> Int? { int64().flatMap { Int(exactly: $0) } }
    package mutating func double() -> Double? { int64().map { Double(bitPattern: UInt64(bitPattern: $0)) } }
    package mutating func bool() -> Bool? {
        switch uint8() {
        case 0: false
        case 1: true
        default: nil
        }
    }
    package mutating func run() -> ArraySlice<UInt8>? {
        guard let n = uint32(), n <= UInt32(longestRun) else { return nil }
        return take(Int(n))
    }
    package mutating func string() -> String? { run().flatMap { String(validating: $0, as: UTF8.self) } }

    /// What ``WireWriter/optional(_:_:)`` wrote: `.some(nil)` for no value, nil for bytes that are
    /// not one.
    package mutating func optional<T>(_ read: (inout WireReader) -> T?) -> T?? {
        guard let present = bool() else { return nil }
        guard present else { return .some(nil) }
        guard let value = read(&self) else { return nil }
        return .some(value)
    }
}
