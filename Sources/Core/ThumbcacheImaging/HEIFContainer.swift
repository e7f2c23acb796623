/// The items of a HEIF or AVIF file (ISO/IEC 23008-12 over ISO-BMFF): which images it holds,
/// where their coded bytes lie, their properties and how they refer to each other.
///
/// Our own reader, so that a HEVC image can be decoded tile by tile straight through libde265
/// (libheif 1.15 assembles the whole picture and copies it first; Docs/IMAGING.md). It reads the
/// `meta` box in place and trusts no size, offset or count: every read is bounds-checked and any
/// inconsistency is a ``Malformed`` error.
package struct HEIFContainer: Sendable {
    package typealias ItemID = UInt32

    /// A four-character code, as a box or item type.
    package struct FourCC: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        package init(stringLiteral value: StaticString) {
            precondition(value.utf8CodeUnitCount == 4, "a four-character code")
            rawValue = value.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
        }
        package var description: String {
            String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) }, as: UTF8.self)
        }
    }

    package struct Item: Sendable {
        package let id: ItemID
        package let type: FourCC
        /// `infe`'s flag 1: not meant to be shown on its own (a tile, an alpha plane).
        package let hidden: Bool
        /// A `mime` item's content type (`application/rdf+xml`: XMP); nil for other items.
        package var contentType: String? = nil
    }

    /// The properties thumbcache acts on; anything else is kept by its type only.
    package enum Property: Sendable, Equatable {
        /// The HEVC decoder configuration record: its byte range in the file.
        case hvcC(Range<Int>)
        /// The AV1 codec configuration record: its byte range in the file.
        case av1C(Range<Int>)
        case size(width: Int, height: Int)
        /// `irot`: quarter turns anticlockwise.
        case rotation(Int)
        /// `imir`: 0 swaps top and bottom, 1 left and right. (HEIF's first text said the opposite;
        /// its amendment 2 settled on what iPhones and libheif already did.)
        case mirror(axis: Int)
        /// `colr` of type `nclx`: the YCbCr matrix and whether samples use the full range.
        case colour(matrix: Int, fullRange: Bool)
        /// `auxC`: what an auxiliary image is (an alpha plane's URN, a depth map's…).
        case auxiliary(String)
        /// `pixi`: bits per channel.
        case bits([Int])
        case other(FourCC)
    }

    /// A property as an item uses it; an essential one must be understood to show the item.
    package struct Association: Sendable {
        package let property: Property
        package let essential: Bool
    }

    /// What a file's boxes got wrong, for the per-file error.
    package struct Malformed: Error, Sendable, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// A grid image's layout (`grid` item): tiles in rows, left to right, top to bottom.
    package struct Grid: Sendable {
        package let rows: Int
        package let columns: Int
        package let width: Int
        package let height: Int
        package let tiles: [ItemID]
    }

    package let primary: ItemID
    package let items: [ItemID: Item]
    private let locations: [ItemID: Location]
    private let associations: [ItemID: [Association]]
    private let references: [(type: FourCC, from: ItemID, to: [ItemID])]
    /// The `idat` box's payload, for items stored inside the `meta` box.
    private let idat: Range<Int>?
    private let fileSize: Int

    private struct Location: Sendable {
        var inIdat: Bool
        var extents: [Range<Int>]
    }

    /// Reads the container of the file whose bytes are `bytes`.
    package init(_ bytes: UnsafeRawBufferPointer) throws(Malformed) {
        fileSize = bytes.count
        var top = Reader(bytes, 0..<bytes.count)
        var meta: Range<Int>?
        while !top.atEnd, meta == nil {
            let box = try top.box()
            if box.type == "meta" { meta = box.payload }
        }
        guard let meta else { throw Malformed("no meta box") }
        var inMeta = Reader(bytes, meta)
        try inMeta.skip(4)  // version and flags
        var primary: ItemID?
        var items: [ItemID: Item] = [:], locations: [ItemID: Location] = [:]
        var properties: [Property] = [], indices: [(ItemID, [(Int, Bool)])] = []
        var references: [(type: FourCC, from: ItemID, to: [ItemID])] = []
        var idat: Range<Int>?
        while !inMeta.atEnd {
            let box = try inMeta.box()
            var r = Reader(bytes, box.payload)
            switch box.type {
            case "pitm":
                let version = try r.u8(); try r.skip(3)
                primary = try r.id(wide: version != 0)
            case "iloc": locations = try Self.locations(&r)
            case "iinf":
                let version = try r.u8(); try r.skip(3)
                _ = try r.id(wide: version != 0)  // the entry count: the boxes that follow say it
                while !r.atEnd {
                    let entry = try r.box()
                    guard entry.type == "infe" else { continue }
                    var e = Reader(bytes, entry.payload)
                    let v = try e.u8()
                    let flags = try e.u24()
                    guard v >= 2 else { continue }  // versions 0 and 1 name no item type
                    let id = try e.id(wide: v != 2)
                    try e.skip(2)  // protection index
                    let type = FourCC(rawValue: try e.u32())
                    var item = Item(id: id, type: type, hidden: flags & 1 != 0)
                    // A mime item's name, then its content type, each ended by a zero byte.
                    if type == "mime", e.cString() != nil { item.contentType = e.cString() }
                    items[id] = item
                }
            case "iref":
                let version = try r.u8(); try r.skip(3)
                while !r.atEnd {
                    let reference = try r.box()
                    var e = Reader(bytes, reference.payload)
                    let from = try e.id(wide: version != 0)
                    let count = Int(try e.u16())
                    var to: [ItemID] = []
                    for _ in 0..<count { to.append(try e.id(wide: version != 0)) }
                    references.append((reference.type, from, to))
                }
            case "iprp":
                while !r.atEnd {
                    let child = try r.box()
                    var c = Reader(bytes, child.payload)
                    if child.type == "ipco" {
                        while !c.atEnd { properties.append(try Self.property(try c.box(), bytes)) }
                    } else if child.type == "ipma" {
                        indices += try Self.associations(&c)
                    }
                }
            case "idat": idat = box.payload
            default: break
            }
        }
        guard let primary else { throw Malformed("no primary item (pitm)") }
        guard items[primary] != nil else { throw Malformed("the primary item \(primary) is not described (iinf)") }
        var associations: [ItemID: [Association]] = [:]
        for (id, list) in indices {
            for (index, essential) in list where index > 0 {
                guard index <= properties.count else { throw Malformed("item \(id) uses property \(index) of \(properties.count)") }
                associations[id, default: []].append(Association(property: properties[index - 1], essential: essential))
            }
        }
        self.primary = primary
        self.items = items
        self.locations = locations
        self.associations = associations
        self.references = references
        self.idat = idat
    }

    /// The properties `item` uses, in the order the file lists them (transforms apply in it).
    package func properties(of item: ItemID) -> [Association] { associations[item] ?? [] }

    /// The items `item` refers to by `type` (`dimg`: a derived image's inputs, in order).
    package func references(_ type: FourCC, from item: ItemID) -> [ItemID] {
        references.first { $0.type == type && $0.from == item }?.to ?? []
    }

    /// The items that refer to `item` by `type` (`thmb`: its thumbnails, `cdsc`: its metadata, `auxl`: its auxiliary images).
    /// The XMP packet's item (a `mime` item of `application/rdf+xml`): the one describing `item`
    /// when one says so (`cdsc`), else any.
    package func xmpItem(describing item: ItemID) -> ItemID? {
        func isXMP(_ id: ItemID) -> Bool { items[id]?.type == "mime" && items[id]?.contentType == "application/rdf+xml" }
        return items(referring: "cdsc", to: item).first(where: isXMP) ?? items.keys.sorted().first(where: isXMP)
    }

    package func items(referring type: FourCC, to item: ItemID) -> [ItemID] {
        references.filter { $0.type == type && $0.to.contains(item) }.map(\.from)
    }

    /// Where `item`'s bytes lie in the file, in order; an empty item has none.
    package func extents(of item: ItemID) throws(Malformed) -> [Range<Int>] {
        guard let location = locations[item] else { throw Malformed("item \(item) has no location (iloc)") }
        guard location.inIdat else {
            for e in location.extents where e.upperBound > fileSize { throw Malformed("item \(item) lies past the end of the file") }
            return location.extents
        }
        guard let idat else { throw Malformed("item \(item) is in an idat box the file lacks") }
        return try location.extents.map { (e: Range<Int>) throws(Malformed) -> Range<Int> in
            guard e.upperBound <= idat.count else { throw Malformed("item \(item) lies past the end of idat") }
            return idat.lowerBound + e.lowerBound..<idat.lowerBound + e.upperBound
        }
    }

    /// The layout of the `grid` item `item`, its descriptor read from `bytes` (the same file).
    package func grid(_ item: ItemID, in bytes: UnsafeRawBufferPointer) throws(Malformed) -> Grid {
        let extents = try extents(of: item)
        guard extents.count == 1, let range = extents.first else { throw Malformed("grid \(item)'s descriptor is split") }
        var r = Reader(bytes, range)
        try r.skip(1)
        let wide = try r.u8() & 1 != 0
        let rows = Int(try r.u8()) + 1, columns = Int(try r.u8()) + 1
        let width = Int(try r.id(wide: wide)), height = Int(try r.id(wide: wide))
        let tiles = references("dimg", from: item)
        guard tiles.count == rows * columns else { throw Malformed("grid \(item) has \(tiles.count) tiles for \(rows)×\(columns)") }
        guard width > 0, height > 0 else { throw Malformed("grid \(item) is empty") }
        return Grid(rows: rows, columns: columns, width: width, height: height, tiles: tiles)
    }

    /// Images a viewer would list: not hidden, not another image's thumbnail, alpha or tile.
    package var topLevelImageCount: Int {
        let imageTypes: Set<FourCC> = ["hvc1", "av01", "grid", "iden", "iovl", "jpeg"]
        var secondary = Set<ItemID>()
        for r in references {
            if r.type == "thmb" || r.type == "auxl" { secondary.insert(r.from) }
            if r.type == "dimg" { secondary.formUnion(r.to) }
        }
        return items.values.filter { imageTypes.contains($0.type) && !$0.hidden && !secondary.contains($0.id) }.count
    }

    // MARK: Boxes

    private static func locations(_ r: inout Reader) throws(Malformed) -> [ItemID: Location] {
        let version = try r.u8(); try r.skip(3)
        guard version <= 2 else { throw Malformed("iloc version \(version)") }
        let sizes = try r.u16()
        let offsetSize = Int(sizes >> 12), lengthSize = Int(sizes >> 8 & 15), baseSize = Int(sizes >> 4 & 15)
        let indexSize = version == 0 ? 0 : Int(sizes & 15)
        let count = Int(try r.id(wide: version == 2))
        var locations: [ItemID: Location] = [:]
        for _ in 0..<count {
            let id = try r.id(wide: version == 2)
            let method = version == 0 ? 0 : Int(try r.u16() & 15)
            guard try r.u16() == 0 else { throw Malformed("item \(id) lies in another file") }
            let base = try r.sized(baseSize)
            let extentCount = Int(try r.u16())
            var extents: [Range<Int>] = []
            for _ in 0..<extentCount {
                _ = try r.sized(indexSize)
                let offset = try r.sized(offsetSize), length = try r.sized(lengthSize)
                guard method <= 1 else { throw Malformed("item \(id) is built from other items' data") }
                let (start, o1) = base.addingReportingOverflow(offset)
                let (end, o2) = start.addingReportingOverflow(length)
                guard !o1, !o2, length > 0 else { throw Malformed("item \(id) has an extent out of range") }
                extents.append(start..<end)
            }
            locations[id] = Location(inIdat: method == 1, extents: extents)
        }
        return locations
    }

    private static func associations(_ r: inout Reader) throws(Malformed) -> [(ItemID, [(Int, Bool)])] {
        let version = try r.u8()
        let flags = try r.u24()
        let count = Int(try r.u32())
        var all: [(ItemID, [(Int, Bool)])] = []
        for _ in 0..<count {
            let id = try r.id(wide: version >= 1)
            let n = Int(try r.u8())
            var list: [(Int, Bool)] = []
            for _ in 0..<n {
                if flags & 1 != 0 {
                    let v = try r.u16()
                    list.append((Int(v & 0x7FFF), v & 0x8000 != 0))
                } else {
                    let v = try r.u8()
                    list.append((Int(v & 0x7F), v & 0x80 != 0))
                }
            }
            all.append((id, list))
        }
        return all
    }

    private static func property(_ box: Reader.Box, _ bytes: UnsafeRawBufferPointer) throws(Malformed) -> Property {
        var r = Reader(bytes, box.payload)
        switch box.type {
        case "hvcC": return .hvcC(box.payload)
        case "av1C": return .av1C(box.payload)
        case "ispe":
            try r.skip(4)
            return .size(width: Int(try r.u32()), height: Int(try r.u32()))
        case "irot": return .rotation(Int(try r.u8() & 3))
        case "imir": return .mirror(axis: Int(try r.u8() & 1))
        case "colr":
            guard try r.u32() == FourCC("nclx").rawValue else { return .other(box.type) }
            try r.skip(4)  // primaries, transfer characteristics
            let matrix = Int(try r.u16())
            return .colour(matrix: matrix, fullRange: try r.u8() & 0x80 != 0)
        case "auxC":
            try r.skip(4)
            let rest = bytes[r.position..<box.payload.upperBound]
            return .auxiliary(String(decoding: rest.prefix { $0 != 0 }, as: UTF8.self))
        case "pixi":
            try r.skip(4)
            let n = Int(try r.u8())
            var bits: [Int] = []
            for _ in 0..<n { bits.append(Int(try r.u8())) }
            return .bits(bits)
        default: return .other(box.type)
        }
    }
}

/// A bounds-checked big-endian reader over a range of the file.
private struct Reader {
    let bytes: UnsafeRawBufferPointer
    private(set) var position: Int
    let end: Int

    init(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
        self.bytes = bytes
        position = range.lowerBound
        end = min(range.upperBound, bytes.count)
    }

    var atEnd: Bool { position >= end }

    struct Box {
        let type: HEIFContainer.FourCC
        let payload: Range<Int>
    }

    /// The next box: its type and payload, which must lie inside this reader's range.
    mutating func box() throws(HEIFContainer.Malformed) -> Box {
        let start = position
        var size = Int(try u32())
        let type = HEIFContainer.FourCC(rawValue: try u32())
        if size == 1 {
            let large = try u64()
            guard large <= UInt64(Int.max) else { throw HEIFContainer.Malformed("box \(type) is too large") }
            size = Int(large)
        } else if size == 0 {
            size = end - start
        }
        let header = position - start
        guard size >= header, size <= end - start else { throw HEIFContainer.Malformed("box \(type) at \(start) overruns its parent") }
        position = start + size
        return Box(type: type, payload: start + header..<start + size)
    }

    /// A string ended by a zero byte, inside the range; nil when none ends there.
    mutating func cString() -> String? {
        guard let zero = bytes[position..<end].firstIndex(of: 0) else { return nil }
        defer { position = zero + 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<zero]), as: UTF8.self)
    }

    mutating func skip(_ n: Int) throws(HEIFContainer.Malformed) {
        guard n <= end - position else { throw HEIFContainer.Malformed("a box ends early at \(position)") }
        position += n
    }

    mutating func u8() throws(HEIFContainer.Malformed) -> UInt8 { UInt8(try sized(1)) }
    mutating func u16() throws(HEIFContainer.Malformed) -> UInt16 { UInt16(try sized(2)) }
    mutating func u24() throws(HEIFContainer.Malformed) -> UInt32 { UInt32(try sized(3)) }
    mutating func u32() throws(HEIFContainer.Malformed) -> UInt32 { UInt32(try sized(4)) }
    /// An item ID or count: 32 bits in the later box versions, 16 before.
    mutating func id(wide: Bool) throws(HEIFContainer.Malformed) -> UInt32 { UInt32(try sized(wide ? 4 : 2)) }
    mutating func u64() throws(HEIFContainer.Malformed) -> UInt64 {
        let high = UInt64(try u32())
        return high << 32 | UInt64(try u32())
    }

    /// An unsigned big-endian field of `n` bytes (0, 1, 2, 3, 4 or 8: iloc's sizes); 0 when `n` is 0.
    mutating func sized(_ n: Int) throws(HEIFContainer.Malformed) -> Int {
        guard n <= end - position else { throw HEIFContainer.Malformed("a box ends early at \(position)") }
        guard n <= 8 else { throw HEIFContainer.Malformed("a field of \(n) bytes") }
        var v: UInt64 = 0
        for i in 0..<n { v = v << 8 | UInt64(bytes[position + i]) }
        position += n
        guard v <= UInt64(Int.max) else { throw HEIFContainer.Malformed("a field out of range at \(position)") }
        return Int(v)
    }
}
