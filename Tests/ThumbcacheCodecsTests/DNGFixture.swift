import ThumbcacheImaging

/// A minimal DNG written here (Debian has no DNG encoder): IFD0 with DNGVersion, Make, Model,
/// Orientation and, if given, a JPEG preview (JPEGInterchangeFormat); a SubIFD with the raw image
/// as LinearRaw RGB, 16 bits, uncompressed. LibRaw reads it as a camera would have written it.
struct DNGFixture {
    var raw: RGBAImage
    var preview: [UInt8]?
    var orientation: UInt16 = 1
    var make = "TestCam"
    var model = "DNG 1"

    /// One IFD entry: tag, TIFF type (1 byte, 2 ascii, 3 short, 4 long), count, value bytes.
    private struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: Int
        var value: [UInt8]
    }

    private static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
    private static func short(_ tag: UInt16, _ values: [UInt16]) -> Entry { Entry(tag: tag, type: 3, count: values.count, value: values.flatMap(le16)) }
    private static func long(_ tag: UInt16, _ values: [UInt32]) -> Entry { Entry(tag: tag, type: 4, count: values.count, value: values.flatMap(le32)) }
    private static func ascii(_ tag: UInt16, _ text: String) -> Entry {
        Entry(tag: tag, type: 2, count: text.utf8.count + 1, value: Array(text.utf8) + [0])
    }

    func build() -> [UInt8] {
        var out: [UInt8] = Array("II".utf8) + Self.le16(42) + Self.le32(8)
        // Layout: IFD0, its out-of-line values; the SubIFD and its values; pixels; preview.
        let pixels: [UInt8] = stride(from: 0, to: raw.pixels.count, by: 4).flatMap { p in
            (0..<3).flatMap { c in Self.le16(UInt16(raw.pixels[p + c]) * 257) }
        }
        func ifdSize(_ entries: [Entry]) -> Int {
            2 + entries.count * 12 + 4 + entries.reduce(0) { $0 + ($1.value.count > 4 ? ($1.value.count + 1) & ~1 : 0) }
        }
        var ifd0: [Entry] = [
            Self.long(254, [1]),
            Self.ascii(271, make), Self.ascii(272, model), Self.short(274, [orientation]),
            Entry(tag: 0xC612, type: 1, count: 4, value: [1, 4, 0, 0]),
        ]
        var sub: [Entry] = [
            Self.long(254, [0]), Self.long(256, [UInt32(raw.width)]), Self.long(257, [UInt32(raw.height)]),
            Self.short(258, [16, 16, 16]), Self.short(259, [1]), Self.short(262, [34892]), Self.short(277, [3]),
            Self.long(278, [UInt32(raw.height)]), Self.long(279, [UInt32(pixels.count)]), Self.short(284, [1]),
            Self.long(0xC61D, [65535]),  // WhiteLevel
        ]
        // Offsets depend on sizes only, so lay out with placeholders first.
        ifd0.append(Self.long(330, [0]))  // SubIFDs
        if preview != nil { ifd0 += [Self.long(513, [0]), Self.long(514, [UInt32(preview!.count)])] }
        sub.append(Self.long(273, [0]))  // StripOffsets
        ifd0.sort { $0.tag < $1.tag }
        sub.sort { $0.tag < $1.tag }
        let subOffset = 8 + ifdSize(ifd0)
        let pixelOffset = subOffset + ifdSize(sub)
        let previewOffset = pixelOffset + pixels.count
        for i in ifd0.indices {
            if ifd0[i].tag == 330 { ifd0[i].value = Self.le32(UInt32(subOffset)) }
            if ifd0[i].tag == 513 { ifd0[i].value = Self.le32(UInt32(previewOffset)) }
        }
        for i in sub.indices where sub[i].tag == 273 { sub[i].value = Self.le32(UInt32(pixelOffset)) }
        func write(_ entries: [Entry], at start: Int) {
            var values: [UInt8] = []
            let valuesStart = start + 2 + entries.count * 12 + 4
            out += Self.le16(UInt16(entries.count))
            for e in entries {
                out += Self.le16(e.tag) + Self.le16(e.type) + Self.le32(UInt32(e.count))
                if e.value.count <= 4 {
                    out += e.value + [UInt8](repeating: 0, count: 4 - e.value.count)
                } else {
                    out += Self.le32(UInt32(valuesStart + values.count))
                    values += e.value
                    if values.count % 2 == 1 { values.append(0) }
                }
            }
            out += Self.le32(0)
            out += values
        }
        write(ifd0, at: 8)
        write(sub, at: subOffset)
        out += pixels
        if let preview { out += preview }
        return out
    }
}
