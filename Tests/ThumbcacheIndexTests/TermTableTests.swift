import Testing
@testable import ThumbcacheIndex

/// The term table's byte order, which posting edits are applied in (LMDB's key order).
struct TermTableTests {
    @Test func sortedOrderIsByteOrder() {
        // Keys sharing long beginnings (sorted eight bytes at a time), prefixes of each other,
        // zero bytes where padding would be, and high bytes.
        var keys: Set<[UInt8]> = [[], [0], [0, 0], [0xFF], Array("d".utf8)]
        var state: UInt64 = 7
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33) % n
        }
        let stems = ["/home/user/Pictures/2019/", "/home/user/Pictures/2020/", "/home/user/", "/h"]
        while keys.count < 3000 {
            var key = Array(stems[next(stems.count)].utf8)
            for _ in 0..<next(20) { key.append([0, 1, 0x2F, 0x61, 0x7A, 0xFF][next(6)]) }
            keys.insert(key)
        }
        var table = TermTable()
        for key in keys { _ = key.withUnsafeBytes { table.intern($0) } }
        let order = table.withKeys { key in table.sortedOrder().map { Array(key($0)) } }
        let expected = keys.sorted { ByteString.less($0, $1) }
        #expect(order.count == expected.count)
        let wrong = zip(order, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(wrong == nil, "first out of order at \(wrong?.offset ?? -1): \(wrong?.element.0 ?? []) ≠ \(wrong?.element.1 ?? [])")
    }
}
