import CDe265
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// A HEIC whose picture is HEVC — one coded image or a grid of tiles, as phones write — decoded
/// straight through libde265, a tile at a time, with our own container reader (``HEIFContainer``).
///
/// Against libheif 1.15 (``HEIFSource``, still used for everything else: alpha, cropping, overlays,
/// more than 8 bits) this holds one tile's planes instead of the whole picture twice over, and on
/// a shrinking decode it skips the deblocking and SAO filters, whose effect a thumbnail averages
/// away. Transforms (irot, imir) become the source's orientation, applied to the small result.
final class HEVCSource: RowSource {
    private let path: String
    private let file: MappedFile
    private let container: HEIFContainer
    private let primary: Picture
    /// Embedded thumbnails decodable the same way and turned the same way, smallest first.
    private let thumbnails: [Picture]
    let header: RowSourceHeader
    private var chosen: Picture?
    /// 1, or 2 when native planes are averaged 2×2 as they are converted.
    private var shrink = 1
    private var fast = false

    /// An image to decode: its tiles in rows (one tile for a plain image), all of one size.
    private struct Picture {
        let width: Int
        let height: Int
        let tileWidth: Int
        let tileHeight: Int
        let columns: Int
        let tiles: [HEIFContainer.ItemID]
        let transforms: [HEIFContainer.Property]
        let colour: (matrix: Int, fullRange: Bool)?
    }

    /// The direct decoder for the file on `descriptor` when its primary image is one it handles,
    /// else nil (libheif's turn). A container our reader rejects is left to libheif too, whose
    /// error then names the fault.
    static func direct(descriptor: Int32, name: String) throws(ImagingError) -> HEVCSource? {
        let file = try MappedFile(descriptor: descriptor, name: name)
        guard let container = try? HEIFContainer(file.bytes) else { return nil }
        return HEVCSource(file: file, container: container, name: name)
    }

    private init?(file: MappedFile, container: HEIFContainer, name: String) {
        guard let primary = Self.picture(container.primary, in: container, file.bytes) else { return nil }
        // An alpha plane is libheif's to join to the colour.
        for id in container.items(referring: "auxl", to: container.primary) {
            for p in container.properties(of: id) {
                if case .auxiliary(let urn) = p.property, urn.hasSuffix(":auxid:1") || urn.hasSuffix(":alpha") { return nil }
            }
        }
        guard let orientation = Self.orientation(primary.transforms) else { return nil }
        path = name
        self.file = file
        self.container = container
        self.primary = primary
        thumbnails = container.items(referring: "thmb", to: container.primary)
            .compactMap { Self.picture($0, in: container, file.bytes) }
            .filter { Self.orientation($0.transforms) == orientation }
            .sorted { $0.width * $0.height < $1.width * $1.height }
        header = RowSourceHeader(
            width: primary.width, height: primary.height, hasAlpha: false, exif: Self.exif(container, file.bytes),
            maxShrink: 2, buffered: true,
            // One tile's planes in libde265, and for a grid a band of converted rows a tile high.
            bufferedBytes: primary.tileWidth * primary.tileHeight * 3 / 2 + (primary.columns > 1 ? primary.width * primary.tileHeight * 4 : 0),
            orientation: orientation, bitsPerSample: 8, colorSpace: "RGB", frameCount: container.topLevelImageCount)
    }

    /// `item` as a picture this decoder handles — `hvc1` or a `grid` of `hvc1` tiles, 8-bit,
    /// turned by nothing but irot and imir — or nil.
    private static func picture(_ item: HEIFContainer.ItemID, in container: HEIFContainer, _ bytes: UnsafeRawBufferPointer) -> Picture? {
        guard let type = container.items[item]?.type else { return nil }
        var transforms: [HEIFContainer.Property] = []
        var colour: (Int, Bool)?
        var size: (Int, Int)?
        for p in container.properties(of: item) {
            switch p.property {
            case .rotation, .mirror: transforms.append(p.property)
            case .colour(let matrix, let full): colour = (matrix, full)
            case .size(let w, let h): size = (w, h)
            case .hvcC, .bits, .auxiliary: break
            case .other(let type): if p.essential || type == "clap" { return nil }
            case .av1C: return nil
            }
        }
        let tiles: [HEIFContainer.ItemID], columns: Int, width: Int, height: Int
        if type == "hvc1" {
            guard let size else { return nil }
            (tiles, columns, width, height) = ([item], 1, size.0, size.1)
        } else if type == "grid", let grid = try? container.grid(item, in: bytes) {
            (tiles, columns, width, height) = (grid.tiles, grid.columns, grid.width, grid.height)
        } else {
            return nil
        }
        if let colour, PlanarImage.coefficients(matrix: colour.0) == nil { return nil }
        var tileSize: (Int, Int)?
        for tile in Set(tiles) {
            guard tile == item || container.items[tile]?.type == "hvc1" else { return nil }
            var config: Range<Int>?, own: (Int, Int)?
            for p in container.properties(of: tile) {
                switch p.property {
                case .hvcC(let r): config = r
                case .size(let w, let h): own = (w, h)
                case .colour(let matrix, let full): colour = colour ?? (matrix, full)
                case .other(let type): if p.essential || type == "clap" { return nil }
                case .rotation, .mirror: if tile != item { return nil }
                default: break
                }
            }
            // 8-bit luma and chroma (the record's bitDepth fields, minus 8).
            guard let config, config.count > 18, bytes[config.lowerBound + 17] & 7 == 0, bytes[config.lowerBound + 18] & 7 == 0,
                  let own, own.0 > 0, own.1 > 0, tileSize == nil || tileSize! == own else { return nil }
            tileSize = own
        }
        // Sizes past these are no HEVC picture; they would only overflow the arithmetic below.
        guard let tileSize, tileSize.0 <= 1 << 16, tileSize.1 <= 1 << 16, width > 0, height > 0, width <= 1 << 20, height <= 1 << 20,
              tileSize.0 * columns >= width, tileSize.1 * (tiles.count / columns) >= height else { return nil }
        return Picture(width: width, height: height, tileWidth: tileSize.0, tileHeight: tileSize.1, columns: columns,
                       tiles: tiles, transforms: transforms, colour: colour)
    }

    /// The orientation that turns stored pixels as `transforms` do in order, found by turning a
    /// small asymmetric image both ways (the eight orientations are few; the algebra is error-prone).
    private static func orientation(_ transforms: [HEIFContainer.Property]) -> Orientation? {
        guard !transforms.isEmpty else { return .up }
        let probe = RGBAImage(width: 3, height: 2, pixels: (0..<24).map { UInt8($0) }, hasAlpha: false)
        var turned = probe
        for t in transforms {
            switch t {
            case .rotation(let quarters): turned = ([.up, .left, .down, .right] as [Orientation])[quarters & 3].apply(to: turned)
            case .mirror(let axis): turned = (axis == 0 ? Orientation.downMirrored : .upMirrored).apply(to: turned)
            default: return nil
            }
        }
        return Orientation.allCases.first { $0.apply(to: probe) == turned }
    }

    /// The primary image's EXIF block as TIFF bytes (its item starts with the offset of the TIFF header).
    private static func exif(_ container: HEIFContainer, _ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        for id in container.items(referring: "cdsc", to: container.primary) where container.items[id]?.type == "Exif" {
            guard let extents = try? container.extents(of: id), extents.reduce(0, { $0 + $1.count }) <= 1 << 20 else { continue }
            let block = extents.flatMap { bytes[$0] }
            return block.withUnsafeBufferPointer { exifTIFF(inBox: $0) }
        }
        return nil
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        try start(shrink: shrink, fast: fast, output: (header.width, header.height))
    }

    func start(shrink: Int, fast: Bool, output size: (width: Int, height: Int)) throws(ImagingError) -> (width: Int, height: Int) {
        let picture = thumbnails.first { $0.width >= size.width && $0.height >= size.height } ?? primary
        chosen = picture
        self.fast = fast
        // The 2×2 pre-shrink only where 2× is still left for the filter after it, and where every
        // tile but the last of a row or column starts on an even pixel.
        let even = (picture.columns == 1 || picture.tileWidth % 2 == 0) && (picture.tiles.count == picture.columns || picture.tileHeight % 2 == 0)
        self.shrink = shrink >= 2 && even && picture.width >= 4 * size.width && picture.height >= 4 * size.height ? 2 : 1
        return ((picture.width + self.shrink - 1) / self.shrink, (picture.height + self.shrink - 1) / self.shrink)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        guard let picture = chosen else { return }
        guard let decoder = de265_new_decoder() else { throw ImagingError(path: path, reason: .corrupt("libde265: out of memory")) }
        defer { de265_free_decoder(decoder) }
        if fast {
            de265_set_parameter_bool(decoder, DE265_DECODER_PARAM_DISABLE_DEBLOCKING, 1)
            de265_set_parameter_bool(decoder, DE265_DECODER_PARAM_DISABLE_SAO, 1)
        }
        let s = shrink
        let outWidth = (picture.width + s - 1) / s
        let band = picture.columns > 1 ? UnsafeMutablePointer<UInt8>.allocate(capacity: outWidth * 4 * ((picture.tileHeight + s - 1) / s)) : nil
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: outWidth * 4)
        defer {
            band?.deallocate()
            row.deallocate()
        }
        let rows = picture.tiles.count / picture.columns
        for r in 0..<rows {
            let top = r * picture.tileHeight
            guard top < picture.height else { break }
            let visibleHeight = min(picture.tileHeight, picture.height - top)
            let bandRows = (visibleHeight + s - 1) / s
            for c in 0..<picture.columns {
                let left = c * picture.tileWidth
                guard left < picture.width else { break }
                let visibleWidth = min(picture.tileWidth, picture.width - left)
                let image = try decode(picture.tiles[r * picture.columns + c], into: decoder)
                defer { de265_release_next_picture(decoder) }
                let planes = try planes(of: image, width: visibleWidth, height: visibleHeight, picture: picture)
                if let band {
                    for y in 0..<bandRows { planes.convert(row: y, shrink: s, into: band + (y * outWidth + left / s) * 4) }
                } else {
                    for y in 0..<bandRows {
                        planes.convert(row: y, shrink: s, into: row)
                        sink(row)
                    }
                }
            }
            if let band { for y in 0..<bandRows { sink(band + y * outWidth * 4) } }
        }
    }

    /// Decodes one tile: its decoder configuration's parameter sets, then its NAL units.
    private func decode(_ tile: HEIFContainer.ItemID, into decoder: UnsafeMutableRawPointer) throws(ImagingError) -> OpaquePointer {
        de265_reset(decoder)
        let bytes = file.bytes
        var config: Range<Int>?
        for p in container.properties(of: tile) { if case .hvcC(let r) = p.property { config = r } }
        guard let config, config.count >= 23 else { throw failure("tile \(tile) has no HEVC configuration") }
        // The record: 22 bytes of profile and sizes (the NAL length size in the last two bits of
        // byte 21), then arrays of parameter-set NAL units, each with a 16-bit length.
        let lengthSize = Int(bytes[config.lowerBound + 21] & 3) + 1
        var at = config.lowerBound + 23
        for _ in 0..<Int(bytes[config.lowerBound + 22]) {
            guard at + 3 <= config.upperBound else { throw failure("tile \(tile)'s HEVC configuration ends early") }
            let count = Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
            at += 3
            for _ in 0..<count {
                guard at + 2 <= config.upperBound else { throw failure("tile \(tile)'s HEVC configuration ends early") }
                let length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
                at += 2
                guard length <= config.upperBound - at else { throw failure("tile \(tile)'s HEVC configuration ends early") }
                try push(bytes.baseAddress! + at, length, decoder)
                at += length
            }
        }
        let extents: [Range<Int>]
        do { extents = try container.extents(of: tile) } catch { throw failure(error.description) }
        // NAL units may straddle extents only in a file split oddly; those are joined first.
        var joined: UnsafeMutableRawBufferPointer?
        defer { joined?.deallocate() }
        var data = UnsafeRawBufferPointer(rebasing: bytes[extents.first ?? 0..<0])
        if extents.count > 1 {
            let all = UnsafeMutableRawBufferPointer.allocate(byteCount: extents.reduce(0) { $0 + $1.count }, alignment: 1)
            joined = all
            var o = 0
            for e in extents {
                UnsafeMutableRawBufferPointer(rebasing: all[o..<o + e.count]).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[e]))
                o += e.count
            }
            data = UnsafeRawBufferPointer(all)
        }
        at = 0
        while at < data.count {
            guard lengthSize <= data.count - at else { throw failure("tile \(tile) ends inside a NAL unit's length") }
            var length = 0
            for i in 0..<lengthSize { length = length << 8 | Int(data[at + i]) }
            at += lengthSize
            guard length <= data.count - at else { throw failure("tile \(tile) is truncated") }
            try push(data.baseAddress! + at, length, decoder)
            at += length
        }
        guard de265_isOK(de265_flush_data(decoder)) != 0 else { throw failure("libde265 refused the end of tile \(tile)") }
        var more: Int32 = 1
        while more != 0 {
            let error = de265_decode(decoder, &more)
            if let image = de265_get_next_picture(decoder) { return image }
            guard de265_isOK(error) != 0 || error == DE265_ERROR_WAITING_FOR_INPUT_DATA else {
                throw failure("libde265: \(String(cString: de265_get_error_text(error)))")
            }
        }
        if let image = de265_get_next_picture(decoder) { return image }
        throw failure("tile \(tile) decoded to no picture")
    }

    private func push(_ nal: UnsafeRawPointer, _ length: Int, _ decoder: UnsafeMutableRawPointer) throws(ImagingError) {
        guard length > 0 else { return }
        let error = de265_push_NAL(decoder, nal, Int32(length), 0, nil)
        guard de265_isOK(error) != 0 else { throw failure("libde265: \(String(cString: de265_get_error_text(error)))") }
    }

    /// The decoded tile's planes, cut to the part of it inside the picture.
    private func planes(of image: OpaquePointer, width: Int, height: Int, picture: Picture) throws(ImagingError) -> PlanarImage {
        let img = image
        guard Int(de265_get_image_width(img, 0)) >= width, Int(de265_get_image_height(img, 0)) >= height else {
            throw failure("a tile is \(de265_get_image_width(img, 0))×\(de265_get_image_height(img, 0)), smaller than its declared size")
        }
        let model: PlanarImage.Model
        switch de265_get_chroma_format(img) {
        case de265_chroma_mono: model = .gray
        case de265_chroma_420: model = .ycbcr(subsampleX: 2, subsampleY: 2)
        case de265_chroma_422: model = .ycbcr(subsampleX: 2, subsampleY: 1)
        default: model = .ycbcr(subsampleX: 1, subsampleY: 1)
        }
        var planes: [(UnsafePointer<UInt8>, Int)] = []
        for c in 0..<(model == .gray ? 1 : 3) {
            var stride: Int32 = 0
            guard de265_get_bits_per_pixel(img, Int32(c)) == 8, let p = de265_get_image_plane(img, Int32(c), &stride) else {
                throw failure("a tile's plane \(c) is not 8-bit")
            }
            planes.append((p, Int(stride)))
        }
        let colour = picture.colour ?? (matrix: 6, fullRange: true)
        guard let coefficients = PlanarImage.coefficients(matrix: colour.matrix) else { throw failure("YCbCr matrix \(colour.matrix)") }
        return PlanarImage(width: width, height: height, model: model, planes: planes, bits: 8, fullRange: colour.fullRange,
                           coefficients: coefficients)
    }

    private func failure(_ reason: String) -> ImagingError { ImagingError(path: path, reason: .corrupt(reason)) }
}
