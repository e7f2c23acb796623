import CThumbcacheZstd

/// A document's record in `texts`: content hash (16 bytes) ‖ word count (varint) ‖ the text's
/// length (varint) ‖ 0 and the text, or 1 and the text compressed with zstd (level 1: about 3×
/// smaller for prose, and fast enough not to show in indexing).
enum TextStore {
    static func record(hash: [UInt8], words: UInt32, text: [UInt8]) -> [UInt8] {
        var record = hash
        Varint.append(&record, UInt64(words))
        Varint.append(&record, UInt64(text.count))
        let header = record.count
        let bound = ZSTD_compressBound(text.count)
        record += [UInt8](repeating: 0, count: 1 + bound)
        let written = record.withUnsafeMutableBytes { out in
            text.withUnsafeBytes { ZSTD_compress(out.baseAddress! + header + 1, bound, $0.baseAddress, $0.count, 1) }
        }
        if ZSTD_isError(written) != 0 || written >= text.count {
            record.removeSubrange(header...)
            record.append(0)
            record += text
        } else {
            record[header] = 1
            record.removeSubrange((header + 1 + written)...)
        }
        return record
    }

    /// The content hash, word count and text of a record; nil if it is malformed.
    static func read(_ record: UnsafeRawBufferPointer) -> (hash: [UInt8], words: Int, text: [UInt8])? {
        guard let (words, length, kind, payload) = parts(record) else { return nil }
        var text: [UInt8]
        switch kind {
        case 0:
            text = Array(payload)
        case 1:
            text = [UInt8](repeating: 0, count: length)
            let n = text.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, $0.count, payload.baseAddress, payload.count) }
            guard ZSTD_isError(n) == 0, n == length else { return nil }
        default:
            return nil
        }
        return (Array(record[0..<16]), words, text)
    }

    /// The first `limit` bytes of a record's text (all of it if shorter), and whether that is the
    /// whole text; only that much is decompressed. Nil if the record is malformed.
    static func read(_ record: UnsafeRawBufferPointer, prefix limit: Int) -> (text: [UInt8], isWhole: Bool)? {
        guard let (_, length, kind, payload) = parts(record) else { return nil }
        let count = min(limit, length)
        switch kind {
        case 0:
            guard payload.count == length else { return nil }
            return (Array(payload.prefix(count)), count == length)
        case 1:
            guard let stream = ZSTD_createDStream() else { return nil }
            defer { ZSTD_freeDStream(stream) }
            var text = [UInt8](repeating: 0, count: count)
            let filled = text.withUnsafeMutableBytes { out -> Bool in
                var output = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                var input = ZSTD_inBuffer(src: payload.baseAddress, size: payload.count, pos: 0)
                while output.pos < output.size {
                    let before = (input.pos, output.pos)
                    let r = ZSTD_decompressStream(stream, &output, &input)
                    // An error, a frame shorter than its record says, or input that ran out.
                    if ZSTD_isError(r) != 0 || (r == 0 && output.pos < output.size) || (input.pos, output.pos) == before { return false }
                }
                return true
            }
            return filled ? (text, count == length) : nil
        default:
            return nil
        }
    }

    /// A record's word count, text length, storage kind and stored text.
    private static func parts(_ record: UnsafeRawBufferPointer) -> (words: Int, length: Int, kind: UInt8, payload: UnsafeRawBufferPointer)? {
        guard record.count >= 18 else { return nil }
        var offset = 16
        guard let words = Varint.read(record, &offset), let length = Varint.read(record, &offset), offset < record.count,
              length <= UInt64(64 << 20) else { return nil }
        return (Int(words), Int(length), record[offset], UnsafeRawBufferPointer(rebasing: record[(offset + 1)...]))
    }
}
