/// TIFF's LZW decoded as copies within the output: each code's string is already in the output
/// where it was last written, so a code is one copy from there (short ones as two 8-byte words)
/// instead of a walk back through the table byte by byte. A third faster than libtiff's own
/// decoder on the TIFF judges' files (Docs/PERFORMANCE.md); the output is byte for byte libtiff's.
///
/// The codes are TIFF's (6.0, section 13): most significant bit first, 9 to 12 bits wide, the
/// width growing one code early, 256 clears the table, 257 ends the strip.
package final class TIFFLZW {
    /// Where each code's string starts in the output, and its length.
    private let offsets = UnsafeMutablePointer<Int>.allocate(capacity: 4096)
    private let lengths = UnsafeMutablePointer<Int>.allocate(capacity: 4096)

    /// Bytes the output needs past the strip's size: a short string is copied as 16 bytes.
    package static let slack = 16

    package enum Failure: Error, Equatable {
        /// The stream is not one this decoder takes as libtiff would (the old, least-significant-bit
        /// first variant, or a strip that does not start by clearing the table): libtiff decodes it.
        case unusual
        /// A code no table holds, or a table grown past 4096 entries.
        case corrupt
        /// The codes ended after this many of the strip's bytes.
        case short(Int)
    }

    package init() {
        for i in 0..<256 {
            offsets[i] = 0
            lengths[i] = 1
        }
    }

    deinit {
        offsets.deallocate()
        lengths.deallocate()
    }

    /// Decodes `input` into `output` until `count` bytes are made; `output` has room for
    /// `count + slack` bytes and is initialized. Wrapping arithmetic in the loop: every index is
    /// checked against `count` or the table's size before use.
    package func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>, count: Int) throws(Failure) -> Int {
        let n = input.count
        guard n >= 2, let bytes = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw .short(0) }
        if bytes[0] == 0 && bytes[1] & 1 != 0 { throw .unusual }
        guard bytes[0] == 0x80 else { throw .unusual }  // a clear code first
        let offsets = self.offsets, lengths = self.lengths
        var bits: UInt64 = 0, held = 0, at = 0
        var width = 9, mask = 511, next = 258
        var old = -1, oldStart = 0
        var o = 0
        while o < count {
            if held < width {
                if at &+ 8 <= n {
                    let word = UInt64(bigEndian: UnsafeRawPointer(bytes + at).loadUnaligned(as: UInt64.self))
                    let take = (63 &- held) &>> 3
                    bits = (bits &<< UInt64(take &* 8)) | (word &>> UInt64(64 &- take &* 8))
                    held &+= take &* 8
                    at &+= take
                } else {
                    while held < width && at < n {
                        bits = (bits &<< 8) | UInt64(bytes[at])
                        held &+= 8
                        at &+= 1
                    }
                    if held < width { throw .short(o) }
                }
            }
            held &-= width
            let code = Int(truncatingIfNeeded: bits &>> UInt64(held)) & mask
            let start = o
            if code < 256 {
                output[o] = UInt8(truncatingIfNeeded: code)
                o &+= 1
                if old < 0 {
                    old = code
                    oldStart = start
                    continue
                }
            } else if code > 257 && code < next && old >= 0 {
                // Written before, entirely behind `o`: no overlap.
                let length = lengths[code]
                let source = output + offsets[code]
                if length <= Self.slack {
                    let low = UnsafeRawPointer(source).loadUnaligned(as: UInt64.self)
                    let high = UnsafeRawPointer(source + 8).loadUnaligned(as: UInt64.self)
                    UnsafeMutableRawPointer(output + o).storeBytes(of: low, as: UInt64.self)
                    UnsafeMutableRawPointer(output + o + 8).storeBytes(of: high, as: UInt64.self)
                } else {
                    (output + o).update(from: source, count: min(length, count &- o))
                }
                o &+= length
            } else if code == 256 {
                (width, mask, next, old) = (9, 511, 258, -1)
                continue
            } else if code == 257 {
                throw .short(o)
            } else if code == next && old >= 0 {
                // The previous string and its own first byte: it ends where this one starts.
                let length = lengths[old]
                (output + o).update(from: output + oldStart, count: min(length, count &- o))
                if o &+ length < count { output[o &+ length] = output[oldStart] }
                o &+= length &+ 1
            } else {
                throw .corrupt
            }
            guard next < 4096 else { throw .corrupt }
            offsets[next] = oldStart
            lengths[next] = lengths[old] &+ 1
            next &+= 1
            if next >= mask && width < 12 {
                width &+= 1
                mask = (1 &<< width) &- 1
            }
            old = code
            oldStart = start
        }
        return count
    }
}
