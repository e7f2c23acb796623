/// What a request's `Range` header asks of a file of `size` bytes (RFC 9110, 14.1.2): one range
/// of bytes is answered (206), anything else — no header, a malformed one, several ranges — is
/// answered with the whole file (200), as the RFC lets a server do; a range that starts past the
/// end is 416.
enum ByteRange: Equatable {
    case whole
    /// Offsets of the first and last byte, both inside the file.
    case part(ClosedRange<Int>)
    case unsatisfiable

    init(_ header: String?, size: Int) {
        guard let header else { self = .whole; return }
        let spec = header.trimmingSpacesAndTabs()
        guard spec.hasPrefix("bytes="), case let sets = spec.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false),
              sets.count == 1 else { self = .whole; return }
        let set = sets[0].trimmingSpacesAndTabs()
        guard let dash = set.firstIndex(of: "-") else { self = .whole; return }
        let first = set[..<dash], last = set[set.index(after: dash)...]
        func number(_ s: Substring) -> Int? {
            guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(s)
        }
        if first.isEmpty {
            // The last n bytes (all of them if the file is shorter).
            guard let n = number(last) else { self = .whole; return }
            self = n == 0 || size == 0 ? .unsatisfiable : .part(max(0, size - n)...(size - 1))
            return
        }
        guard let start = number(first) else { self = .whole; return }
        var end = size - 1
        if !last.isEmpty {
            guard let e = number(last), e >= start else { self = .whole; return }
            end = min(e, size - 1)
        }
        self = start >= size ? .unsatisfiable : .part(start...end)
    }
}

private extension StringProtocol {
    func trimmingSpacesAndTabs() -> Substring {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}
