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
        guard record.count >= 18 else { return nil }
        var offset = 16
        guard let words = Varint.read(record, &offset), let length = Varint.read(record, &offset), offset < record.count,
              length <= UInt64(64 << 20) else { return nil }
        let kind = record[offset]
        let payload = UnsafeRawBufferPointer(rebasing: record[(offset + 1)...])
        var text: [UInt8]
        switch kind {
        case 0:
            text = Array(payload)
        case 1:
            text = [UInt8](repeating: 0, count: Int(length))
            let n = text.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, $0.count, payload.baseAddress, payload.count) }
            guard ZSTD_isError(n) == 0, n == Int(length) else { return nil }
        default:
            return nil
        }
        return (Array(record[0..<16]), Int(words), text)
    }
}
