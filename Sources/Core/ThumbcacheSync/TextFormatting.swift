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

/// Writes `text` to standard error whole (``writeFully(_:_:)``).
package func writeStandardError(_ text: String) { write(text, to: 2) }

/// Writes `text` to standard output whole.
package func writeStandardOutput(_ text: String) { write(text, to: 1) }

private func write(_ text: String, to descriptor: Int32) {
    var text = text
    _ = text.withUTF8 { writeFully(descriptor, UnsafeRawBufferPointer($0)) }
}
