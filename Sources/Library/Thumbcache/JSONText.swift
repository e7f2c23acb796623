/// JSON written straight into bytes, for answers made per request (`serve`'s search took 43 %
/// of its time in JSONSerialization's boxing of `[String: Any]`). Members come out in the order
/// they are written: callers write keys sorted, as `--json` has always printed them.
package struct JSONText {
    package private(set) var bytes: [UInt8] = []
    private let pretty: Bool
    private var depth = 0
    /// Whether the container being written has no member or element yet.
    private var empty = true

    /// `pretty` indents by two spaces and writes `"key" : value`, as `--json` prints.
    package init(pretty: Bool = false) {
        self.pretty = pretty
        bytes.reserveCapacity(4096)
    }

    package var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `{…}`, its members written by `members`.
    package mutating func object(_ members: (inout JSONText) throws -> Void) rethrows {
        try container(0x7B, 0x7D, members)
    }

    /// `[…]`, its elements written by `elements`.
    package mutating func array(_ elements: (inout JSONText) throws -> Void) rethrows {
        try container(0x5B, 0x5D, elements)
    }

    /// One member of the object being written; `value` writes its value.
    package mutating func member(_ key: String, _ value: (inout JSONText) throws -> Void) rethrows {
        separate()
        string(key)
        bytes += pretty ? [0x20, 0x3A, 0x20] : [0x3A]
        try value(&self)
    }

    package mutating func member(_ key: String, _ value: String) { member(key) { $0.string(value) } }
    package mutating func member(_ key: String, _ value: Int) { member(key) { $0.number(Double(value)) } }
    package mutating func member(_ key: String, _ value: Double) { member(key) { $0.number(value) } }
    package mutating func member(_ key: String, _ value: Bool) { member(key) { $0.bool(value) } }
    package mutating func member(_ key: String, _ values: [String]) {
        member(key) { json in json.array { for v in values { $0.element { $0.string(v) } } } }
    }

    /// One element of the array being written.
    package mutating func element(_ value: (inout JSONText) throws -> Void) rethrows {
        separate()
        try value(&self)
    }

    package mutating func string(_ s: String) {
        bytes.append(0x22)
        var s = s
        s.withUTF8 { utf8 in
            var start = 0
            for (i, b) in utf8.enumerated() where b < 0x20 || b == 0x22 || b == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                start = i + 1
                switch b {
                case 0x22: bytes += [0x5C, 0x22]
                case 0x5C: bytes += [0x5C, 0x5C]
                case 0x0A: bytes += [0x5C, 0x6E]
                case 0x0D: bytes += [0x5C, 0x72]
                case 0x09: bytes += [0x5C, 0x74]
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes += [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]]
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(0x22)
    }

    /// A whole number without a fraction (`5`, not `5.0`); a number JSON cannot hold as `null`.
    package mutating func number(_ n: Double) {
        guard n.isFinite else { return bytes += Array("null".utf8) }
        bytes += Array(AttributeFormat.number(n).utf8)
    }

    package mutating func bool(_ b: Bool) { bytes += Array((b ? "true" : "false").utf8) }

    private mutating func container(_ open: UInt8, _ close: UInt8, _ body: (inout JSONText) throws -> Void) rethrows {
        bytes.append(open)
        let outer = empty
        empty = true
        depth += 1
        try body(&self)
        depth -= 1
        if !empty { newline() }
        bytes.append(close)
        empty = outer
    }

    private mutating func separate() {
        if !empty { bytes.append(0x2C) }
        empty = false
        newline()
    }

    private mutating func newline() {
        guard pretty else { return }
        bytes.append(0x0A)
        bytes += repeatElement(0x20, count: 2 * depth)
    }
}
