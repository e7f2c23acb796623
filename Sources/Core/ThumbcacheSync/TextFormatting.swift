#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// What the programs took from Foundation's NSString bridge for their messages, kept here so that
// no module needs corelibs Foundation (and ICU's data) linked in (Docs/PERFORMANCE.md).

extension StringProtocol {
    /// Without leading and trailing white space; `newlines` false keeps line ends (Foundation's
    /// `.whitespaces` against `.whitespacesAndNewlines`).
    package func trimmingWhitespace(newlines: Bool = true) -> String {
        trimming { $0.isWhitespace && (newlines || !$0.isNewline) }
    }

    /// Without the leading and trailing characters `drop` names.
    package func trimming(_ drop: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }
}

/// `value` with `places` digits after the point, as `%.Nf` prints it.
package func fixed(_ value: Double, places: Int) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    let n = buffer.withUnsafeMutableBufferPointer { out in
        withVaList([value]) { vsnprintf(out.baseAddress, out.count, "%.\(places)f", $0) }
    }
    guard n >= 0 else { return String(value) }
    if Int(n) >= buffer.count { return String(value) }
    return String(decoding: buffer[..<Int(n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// `value` in decimal, at least `width` digits, zeros in front (`%0Nd`).
package func zeroPadded(_ value: Int, width: Int) -> String {
    let digits = String(value.magnitude)
    let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
    return value < 0 ? "-" + padded : padded
}

/// Writes `text` to standard error whole (a short write is continued, an interrupted one retried).
package func writeStandardError(_ text: String) { writeAll(2, text) }

/// Writes `text` to standard output whole.
package func writeStandardOutput(_ text: String) { writeAll(1, text) }

private func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            done += n
        }
    }
}

/// Names in the order a file manager lists them: letters without case, runs of digits by their
/// value ("photo 2" before "photo 10"), then byte order to break ties.
package func naturalOrder(_ a: String, _ b: String) -> Bool {
    var i = a.lowercased().unicodeScalars[...], j = b.lowercased().unicodeScalars[...]
    func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 0x30 && s.value <= 0x39 }
    while let x = i.first, let y = j.first {
        if isDigit(x) && isDigit(y) {
            let p = i.prefix(while: isDigit), q = j.prefix(while: isDigit)
            i = i.dropFirst(p.count)
            j = j.dropFirst(q.count)
            // Without their leading zeros, a longer run is a larger number.
            let u = p.drop { $0 == "0" }, v = q.drop { $0 == "0" }
            if u.count != v.count { return u.count < v.count }
            if !u.elementsEqual(v) { return u.lexicographicallyPrecedes(v) { $0.value < $1.value } }
            continue
        }
        if x != y { return x.value < y.value }
        i = i.dropFirst()
        j = j.dropFirst()
    }
    if i.isEmpty != j.isEmpty { return i.isEmpty }
    return a < b
}
