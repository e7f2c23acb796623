import CThumbcacheWords
import Synchronization
import ThumbcacheSync

/// Splits UTF-8 text into folded words, the terms of the full-text index (Docs/QUERY.md, "Words
/// inside files").
///
/// Runs of ASCII letters and digits take a fast path: a word, lowercased. A stretch between ASCII
/// spaces that holds any other byte goes to ICU, whose word rules (and dictionaries for Chinese,
/// Japanese, Thai…) split it, and each of its words is folded as Spotlight's `c` and `d` define
/// (NFKC, case folded, diacritics removed). Documents and queries pass through the same code, so
/// they agree on every word. One breaker per thread: it holds ICU's iterator.
final class WordBreaker {
    /// Longer words are not indexed: base64, hashes and other runs no one searches for.
    static let maxTermBytes = 64

    /// ICU's iterator, opened at the first text that needs it (opening costs more than a short
    /// ASCII query takes to run).
    private var icuIterator: OpaquePointer?
    private var icuOpened = false
    private var folded = [UInt8](repeating: 0, count: 4 * maxTermBytes)

    init() {}

    deinit { tc_words_close(icuIterator) }

    private var icu: OpaquePointer? {
        if !icuOpened {
            icuOpened = true
            var error = [CChar](repeating: 0, count: 256)
            icuIterator = tc_words_open(&error, Int32(error.count))
            if icuIterator == nil { Self.warnOnce(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        }
        return icuIterator
    }

    private static let warned = Mutex(false)

    /// ICU is loaded on first use (a broken install may lack it): said once per process, since
    /// the words of other scripts then go unindexed and unmatched without any file being at fault.
    private static func warnOnce(_ reason: String) {
        guard warned.withLock({ (done: inout Bool) in defer { done = true }; return !done }) else { return }
        let line = Array("thumbcache: words written in anything but ASCII are left out (\(reason))\n".utf8)
        _ = line.withUnsafeBytes { writeFully(2, $0) }
    }

    /// Calls `body` with each word's folded bytes (valid during the call) and its byte range in
    /// `text`, in order.
    func forEachWord(in text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Range<Int>) -> Void) {
        walk(text) { body($0, $1); return true }
    }

    /// As ``forEachWord(in:_:)``, until `body` returns false (a snippet or a spelling check stops
    /// at what it looked for instead of reading a megabyte of text).
    func forEachWordWhile(in text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Range<Int>) -> Bool) {
        walk(text, body)
    }

    // One body for both, inlined into each so that indexing's calls stay as direct as before.
    @inline(__always)
    private func walk(_ text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, Range<Int>) -> Bool) {
        var i = 0
        let n = text.count
        var lower = [UInt8](repeating: 0, count: Self.maxTermBytes)
        while i < n {
            let b = text[i]
            if Self.isASCIIWordByte(b) {
                var j = i
                while j < n, Self.isASCIIWordByte(text[j]) { j += 1 }
                if j < n, text[j] >= 0x80 {
                    // The word goes on in another script (café): the whole stretch goes to ICU.
                    guard let end = wordsOfStretch(text, from: i, body) else { return }
                    i = end
                    continue
                }
                if j - i <= Self.maxTermBytes {
                    let goOn = lower.withUnsafeMutableBytes { out in
                        for k in i..<j { out[k - i] = text[k] | (text[k] >= 0x41 && text[k] <= 0x5A ? 0x20 : 0) }
                        return body(UnsafeRawBufferPointer(rebasing: out[0..<(j - i)]), i..<j)
                    }
                    if !goOn { return }
                }
                i = j
            } else if b >= 0x80 {
                guard let end = wordsOfStretch(text, from: i, body) else { return }
                i = end
            } else {
                i += 1
            }
        }
    }

    /// The words of `text` as folded strings (for queries).
    func words(_ text: String) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var copy = text
        copy.withUTF8 { utf8 in forEachWord(in: UnsafeRawBufferPointer(utf8)) { word, _ in result.append(Array(word)) } }
        return result
    }

    @inline(__always)
    static func isASCIIWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A)
    }

    @inline(__always)
    static func isASCIISpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }

    /// Hands the stretch from `start` to the next ASCII space to ICU; returns where it ends, or
    /// nil when `body` asked to stop.
    private func wordsOfStretch(_ text: UnsafeRawBufferPointer, from start: Int, _ body: (UnsafeRawBufferPointer, Range<Int>) -> Bool) -> Int? {
        var end = start
        while end < text.count, !Self.isASCIISpace(text[end]) { end += 1 }
        guard let icu, let base = text.baseAddress?.advanced(by: start).assumingMemoryBound(to: CChar.self),
              tc_words_set(icu, base, Int64(end - start)) == 0 else { return end }
        var from: Int64 = 0, to: Int64 = 0
        while tc_words_next(icu, &from, &to) == 1 {
            let range = (start + Int(from))..<(start + Int(to))
            let word = UnsafeRawBufferPointer(rebasing: text[range])
            if word.allSatisfy({ $0 < 0x80 }) {
                guard word.count <= Self.maxTermBytes else { continue }
                var lower = Array(word)
                for k in lower.indices where lower[k] >= 0x41 && lower[k] <= 0x5A { lower[k] |= 0x20 }
                guard lower.withUnsafeBytes({ body($0, range) }) else { return nil }
                continue
            }
            let length = folded.withUnsafeMutableBytes { out in
                tc_words_fold(word.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(word.count),
                              out.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(out.count))
            }
            guard length > 0, Int(length) <= Self.maxTermBytes else { continue }
            guard folded.withUnsafeBytes({ body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(length)]), range) }) else { return nil }
        }
        return end
    }
}
