import ThumbcacheStore

/// Self-checking records the probe writes and the tests verify.
///
/// Record `(writer, group, index)` has key content `ContentHash(high: writer, low: group << 16 | index)`
/// and data = 16-byte header (writer, group, index, payload length; u32 LE) + payload
/// (deterministic bytes) + the 16-byte XXH3-128 of header and payload.
package enum ProbeRecords {
    package static let variant = ThumbnailVariant(generatorVersion: 1)

    package static func key(writer: UInt32, group: UInt32, index: UInt32) -> ThumbnailKey {
        ThumbnailKey(content: ContentHash(high: UInt64(writer), low: UInt64(group) << 16 | UInt64(index)),
                     boxWidth: 256, boxHeight: 256, variant: variant)
    }

    package static func data(writer: UInt32, group: UInt32, index: UInt32, size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + 32)
        for v in [writer, group, index, UInt32(size)] { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        var x = UInt64(writer) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(group) << 20 ^ UInt64(index) ^ 0xD1B5_4A32_D192_ED03
        for _ in 0..<size {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            bytes.append(UInt8(truncatingIfNeeded: x))
        }
        bytes.append(contentsOf: ContentHash.of(bytes).bytes)
        return bytes
    }

    package static func writes(writer: UInt32, group: UInt32, groupSize: Int, size: Int) -> [StoreWrite] {
        (0..<UInt32(groupSize)).map { i in
            let header = ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: false, pixelWidth: 256, pixelHeight: 192,
                                         scale: 1, created: 0, sourceContentType: "package.data")
            return .thumbnail(key(writer: writer, group: group, index: i), header, data: data(writer: writer, group: group, index: i, size: size))
        }
    }

    /// True if `data` is intact for the record under `key`.
    package static func verify(key: ThumbnailKey, data: UnsafeRawBufferPointer) -> Bool {
        guard data.count >= 32 else { return false }
        let body = UnsafeRawBufferPointer(rebasing: data[..<(data.count - 16)])
        guard ContentHash(bytes: UnsafeRawBufferPointer(rebasing: data[(data.count - 16)...])) == ContentHash.of(body) else { return false }
        let writer = body.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
        let group = body.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
        let index = body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        return key == Self.key(writer: writer, group: group, index: index)
    }
}
