import CThumbcacheAVCodec
import Glibc
import ThumbcacheCodecSupport
import ThumbcacheImaging
import ThumbcacheSync

/// What opens a HEIF or AVIF the direct path does not handle, from the mapping already made:
/// libheif in the worker that has it, a hand-off to that worker in the one that does not.
package typealias HEIFFallback = @Sendable (_ file: MappedFile, _ name: String) throws(ImagingError) -> any RowSource

/// A HEIF whose picture is HEVC (HEIC) or AV1 (AVIF) — one coded image or a grid of tiles, as
/// phones write — decoded straight through libde265 or dav1d, a tile at a time, with our own
/// container reader (``HEIFContainer``).
///
/// Against libheif 1.15 (`HEIFSource` in the heavy worker, still used for everything else:
/// cropping, overlays) this holds one tile's planes instead of the whole picture twice over, and on a shrinking decode it skips the in-loop filters (HEVC's deblocking and SAO, AV1's
/// deblocking, CDEF and loop restoration), whose effect a thumbnail averages away. Transforms (irot, imir) become the
/// source's orientation, applied to the small result.
final class DirectHEIFSource: RowSource {
    private let path: String
    /// Decoders a grid's band may use side by side (the registry's ``DecodeSettings``).
    private let threads: Int
    private let file: MappedFile
    private let container: HEIFContainer
    private let primary: Picture
    /// The alpha plane (an auxiliary image of the primary's size), decoded before the colour and
    /// kept at the output's size, 8 bits: a quarter of the picture's samples when shrinking.
    private let alpha: Picture?
    /// The colour was multiplied by the alpha (a `prem` reference): divided out again.
    private let premultiplied: Bool
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
        /// Each tile's decoder configuration record (hvcC or av1C), where it lies in the file.
        let configs: [HEIFContainer.ItemID: Range<Int>]
        let codec: TileCodec
        let transforms: [HEIFContainer.Property]
        let colour: (matrix: Int, fullRange: Bool)?
        /// Sample bits, as the first tile's configuration states them.
        let bits: Int
    }

    /// The HEIF or AVIF on `descriptor`: decoded directly when its primary image is one this
    /// decoder handles, else by `fallback` (libheif) from the same mapping. A container our reader
    /// rejects is left to the fallback too, whose error then names the fault.
    static func open(descriptor: Int32, name: String, threads: Int, fallback: HEIFFallback) throws(ImagingError) -> any RowSource {
        let file = try MappedFile(descriptor: descriptor, name: name)
        if let container = try? HEIFContainer(file.bytes),
           let direct = DirectHEIFSource(file: file, container: container, name: name, threads: threads) {
            return direct
        }
        return try fallback(file, name)
    }

    private init?(file: MappedFile, container: HEIFContainer, name: String, threads: Int) {
        guard let primary = Self.picture(container.primary, in: container, file.bytes) else { return nil }
        // An alpha plane of the same size is decoded here; any other is libheif's to join to the colour.
        var alpha: Picture?, premultiplied = false
        for id in container.items(referring: "auxl", to: container.primary) {
            for p in container.properties(of: id) {
                guard case .auxiliary(let urn) = p.property, urn.hasSuffix(":auxid:1") || urn.hasSuffix(":alpha") else { continue }
                guard alpha == nil, let plane = Self.picture(id, in: container, file.bytes), plane.codec == primary.codec,
                      plane.width == primary.width, plane.height == primary.height, plane.transforms.isEmpty else { return nil }
                alpha = plane
                premultiplied = container.items(referring: "prem", to: id).contains(container.primary)
            }
        }
        (self.alpha, self.premultiplied) = (alpha, premultiplied)
        guard let orientation = Self.orientation(primary.transforms) else { return nil }
        path = name
        self.threads = threads
        self.file = file
        self.container = container
        self.primary = primary
        // An embedded thumbnail has no alpha of its own.
        thumbnails = alpha != nil ? [] : container.items(referring: "thmb", to: container.primary)
            .compactMap { Self.picture($0, in: container, file.bytes) }
            .filter { Self.orientation($0.transforms) == orientation }
            .sorted { $0.width * $0.height < $1.width * $1.height }
        header = RowSourceHeader(
            width: primary.width, height: primary.height, hasAlpha: alpha != nil, exif: Self.exif(container, file.bytes),
            maxShrink: 2, buffered: true,
            // One tile's planes in the codec library, and for a grid a band of converted rows a
            // tile high; the alpha plane at full size at most.
            bufferedBytes: primary.tileWidth * primary.tileHeight * 3 / 2 + (primary.columns > 1 ? primary.width * primary.tileHeight * 4 : 0)
                + (alpha != nil ? primary.width * primary.height : 0),
            orientation: orientation, bitsPerSample: primary.bits, colorSpace: "RGB", frameCount: container.topLevelImageCount,
            media: Self.motionPhoto(container, file.bytes))
    }

    /// `item` as a picture this decoder handles — `hvc1` or `av01`, or a `grid` of either, at 8
    /// to 12 bits (above 8 as 16-bit samples), turned by nothing but irot and imir — or nil.
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
            case .hvcC, .av1C, .bits, .auxiliary: break
            case .other(let type): if p.essential || type == "clap" { return nil }
            }
        }
        let tiles: [HEIFContainer.ItemID], columns: Int, width: Int, height: Int
        if type == "hvc1" || type == "av01" {
            guard let size else { return nil }
            (tiles, columns, width, height) = ([item], 1, size.0, size.1)
        } else if type == "grid", let grid = try? container.grid(item, in: bytes) {
            (tiles, columns, width, height) = (grid.tiles, grid.columns, grid.width, grid.height)
        } else {
            return nil
        }
        if let colour, PlanarImage.coefficients(matrix: colour.0) == nil { return nil }
        guard let tileType = container.items[tiles.first ?? item]?.type else { return nil }
        let codec: TileCodec
        switch tileType {
        case "hvc1": codec = .hevc
        case "av01": codec = .av1
        default: return nil
        }
        var tileSize: (Int, Int)?
        var configs: [HEIFContainer.ItemID: Range<Int>] = [:]
        for tile in Set(tiles) {
            guard container.items[tile]?.type == tileType else { return nil }
            var config: Range<Int>?, own: (Int, Int)?
            for p in container.properties(of: tile) {
                switch p.property {
                case .hvcC(let r) where codec == .hevc: config = r
                case .av1C(let r) where codec == .av1: config = r
                case .size(let w, let h): own = (w, h)
                case .colour(let matrix, let full): colour = colour ?? (matrix, full)
                case .other(let type): if p.essential || type == "clap" { return nil }
                case .rotation, .mirror: if tile != item { return nil }
                default: break
                }
            }
            guard let config, codec.handles(UnsafeRawBufferPointer(rebasing: bytes[config])),
                  let own, own.0 > 0, own.1 > 0, tileSize == nil || tileSize! == own else { return nil }
            tileSize = own
            configs[tile] = config
        }
        // Sizes past these are no coded picture; they would only overflow the arithmetic below.
        guard let tileSize, tileSize.0 <= 1 << 16, tileSize.1 <= 1 << 16, width > 0, height > 0, width <= 1 << 20, height <= 1 << 20,
              tileSize.0 * columns >= width, tileSize.1 * (tiles.count / columns) >= height else { return nil }
        return Picture(width: width, height: height, tileWidth: tileSize.0, tileHeight: tileSize.1, columns: columns,
                       tiles: tiles, configs: configs, codec: codec, transforms: transforms, colour: colour,
                       bits: codec.bits(UnsafeRawBufferPointer(rebasing: bytes[configs[tiles[0]]!])))
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
        guard let alpha else { return try readColour(picture, sink) }
        // The alpha plane first, kept at the output's size; then each colour row takes its alpha.
        let outWidth = (picture.width + shrink - 1) / shrink
        let plane = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: outWidth * ((picture.height + shrink - 1) / shrink))
        defer { plane.deallocate() }
        var y = 0
        try readColour(alpha) { row in
            for x in 0..<outWidth { plane[y * outWidth + x] = row[x * 4] }
            y += 1
        }
        let merged = UnsafeMutablePointer<UInt8>.allocate(capacity: outWidth * 4)
        defer { merged.deallocate() }
        y = 0
        let premultiplied = premultiplied
        try readColour(picture) { row in
            merged.update(from: row, count: outWidth * 4)
            for x in 0..<outWidth {
                let a = plane[y * outWidth + x]
                merged[x * 4 + 3] = a
                // Averaged 2×2 when shrinking, premultiplied colour and alpha alike: still a pair to divide.
                if premultiplied && a < 255 {
                    for c in 0..<3 { merged[x * 4 + c] = a == 0 ? 0 : UInt8(min(255, (Int(merged[x * 4 + c]) * 255 + Int(a) / 2) / Int(a))) }
                }
            }
            y += 1
            sink(merged)
        }
    }

    /// `picture`'s rows, opaque RGBA (an alpha plane's grey in its colour channels).
    private func readColour(_ picture: Picture, _ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        if picture.tiles.count == 1, picture.codec == .hevc, fast, streams(picture) { return try stream(picture, sink) }
        let s = shrink
        let outWidth = (picture.width + s - 1) / s
        let rows = picture.tiles.count / picture.columns
        // A picture one tile wide is converted straight from the decoded tile; wider ones into a
        // band a tile high, whose columns up to `threads` decoders fill side by side.
        let threads = picture.columns > 1 ? min(threads, picture.columns) : 1
        var decoders: [any TileDecoder] = []
        for _ in 0..<threads { decoders.append(try makeDecoder(picture)) }
        guard picture.columns > 1 else {
            let row = UnsafeMutablePointer<UInt8>.allocate(capacity: outWidth * 4)
            defer { row.deallocate() }
            for r in 0..<rows where r * picture.tileHeight < picture.height {
                let height = min(picture.tileHeight, picture.height - r * picture.tileHeight)
                let planes = try decode(picture.tiles[r], with: decoders[0], picture: picture, width: min(picture.tileWidth, picture.width),
                                        height: height)
                defer { decoders[0].release() }
                for y in 0..<(height + s - 1) / s {
                    planes.convert(row: y, shrink: s, into: row)
                    sink(row)
                }
            }
            return
        }
        let band = UnsafeMutablePointer<UInt8>.allocate(capacity: outWidth * 4 * ((picture.tileHeight + s - 1) / s))
        defer { band.deallocate() }
        for r in 0..<rows where r * picture.tileHeight < picture.height {
            let height = min(picture.tileHeight, picture.height - r * picture.tileHeight)
            let job = BandJob(source: self, picture: picture, row: r, height: height, band: band, outWidth: outWidth)
            var helpers: [(pthread_t, BandJob.Outcome)] = []
            for k in 1..<threads {
                let outcome = BandJob.Outcome()
                let decoder = DecoderBox(decoders[k])
                helpers.append((startThread { job.fill(columnsFrom: k, every: threads, with: decoder.decoder, into: outcome) }, outcome))
            }
            let own = BandJob.Outcome()
            job.fill(columnsFrom: 0, every: threads, with: decoders[0], into: own)
            for (thread, _) in helpers { pthread_join(thread, nil) }
            if let error = own.error ?? helpers.lazy.compactMap(\.1.error).first { throw error }
            for y in 0..<(height + s - 1) / s { sink(band + y * outWidth * 4) }
        }
    }

    /// Planes of more bytes than this stream through libde265 (``stream(_:_:)``); fewer go whole to libavcodec, faster.
    static let wholePictureBytes = 16 << 20

    /// Whether `picture` (one coded HEVC picture) streams: its planes over ``wholePictureBytes``, or no libavcodec.
    private func streams(_ picture: Picture) -> Bool {
        guard let record = picture.configs[picture.tiles[0]] else { return true }
        let bytes = HEVCBitstream.planeBytes(UnsafeRawBufferPointer(rebasing: file.bytes[record]), pixels: picture.tileWidth * picture.tileHeight)
        // Loaded only for a picture it would take: its libraries are 13 MB of a worker's memory.
        return bytes > Self.wholePictureBytes || cavc_load() != nil
    }

    private func makeDecoder(_ picture: Picture) throws(ImagingError) -> any TileDecoder {
        switch picture.codec {
        case .hevc: if let decoder = LibavcodecTileDecoder(path: path, fast: fast) { decoder } else { try HEVCTileDecoder(path: path, fast: fast) }
        case .av1: try AV1TileDecoder(path: path, fast: fast, maxPixels: picture.tileWidth * picture.tileHeight)
        }
    }

    /// One band's tiles, decoded and converted into the band by one or more threads, each taking
    /// every `every`-th column. Unchecked Sendable: the threads write disjoint columns of the band,
    /// each through its own decoder, and are joined before the band is read; the source is only
    /// read (its mapping and container do not change after init).
    private struct BandJob: @unchecked Sendable {
        let source: DirectHEIFSource
        let picture: Picture
        let row: Int
        let height: Int
        let band: UnsafeMutablePointer<UInt8>
        let outWidth: Int

        /// A thread's error, read after the thread is joined.
        final class Outcome: @unchecked Sendable {
            var error: ImagingError?
        }

        func fill(columnsFrom first: Int, every: Int, with decoder: any TileDecoder, into outcome: Outcome) {
            let s = source.shrink
            for c in stride(from: first, to: picture.columns, by: every) {
                let left = c * picture.tileWidth
                guard left < picture.width else { break }
                do {
                    let planes = try source.decode(picture.tiles[row * picture.columns + c], with: decoder, picture: picture,
                                                   width: min(picture.tileWidth, picture.width - left), height: height)
                    defer { decoder.release() }
                    for y in 0..<(height + s - 1) / s { planes.convert(row: y, shrink: s, into: band + (y * outWidth + left / s) * 4) }
                } catch {
                    outcome.error = error
                    return
                }
            }
        }
    }

    /// A decoder handed to one helper thread, which alone uses it until joined.
    private struct DecoderBox: @unchecked Sendable {
        let decoder: any TileDecoder
        init(_ decoder: any TileDecoder) { self.decoder = decoder }
    }

    /// Decodes one tile and returns its planes cut to the part of it inside the picture.
    private func decode(_ tile: HEIFContainer.ItemID, with decoder: any TileDecoder, picture: Picture,
                        width: Int, height: Int) throws(ImagingError) -> PlanarImage {
        try codedBytes(of: tile) { data, dropFilePages throws(ImagingError) in
            let decoded = try decoder.decode(config: UnsafeRawBufferPointer(rebasing: file.bytes[picture.configs[tile]!]), data: data,
                                             tile: tile, declared: (picture.tileWidth, picture.tileHeight), copied: dropFilePages)
            return try planar(decoded, tile: tile, picture: picture, width: width, height: height)
        }
    }

    /// The one coded picture of an HEIC, converted a band at a time as libde265 finishes its rows,
    /// whose pages then go: its planes are tens of megabytes, a band of them is enough
    /// (``StreamedPlanes``). Only without the in-loop filters, which change rows after the last block.
    private func stream(_ picture: Picture, _ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let s = shrink, tile = picture.tiles[0]
        let width = min(picture.tileWidth, picture.width), height = min(picture.tileHeight, picture.height)
        let outRows = (height + s - 1) / s
        let decoder = try HEVCTileDecoder(path: path, fast: true, streamed: true)
        defer { decoder.release() }
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: (width + s - 1) / s * 4)
        defer { row.deallocate() }
        try codedBytes(of: tile) { data, dropFilePages throws(ImagingError) in
            var planes: PlanarImage?, next = 0
            try decoder.decodeStreamed(config: UnsafeRawBufferPointer(rebasing: file.bytes[picture.configs[tile]!]), data: data, tile: tile,
                                       declared: (picture.tileWidth, picture.tileHeight), copied: dropFilePages) { decoded, finished throws(ImagingError) in
                if planes == nil { planes = try planar(decoded, tile: tile, picture: picture, width: width, height: height) }
                while next < outRows, min(next * s + s - 1, height - 1) < finished {
                    planes!.convert(row: next, shrink: s, into: row)
                    sink(row)
                    next += 1
                }
                return min(next * s, finished)
            }
        }
    }

    /// `body` given a tile's coded bytes — in place, or joined where they lie in several extents,
    /// valid during `body` only — and what drops the file's pages of them.
    private func codedBytes<R>(of tile: HEIFContainer.ItemID,
                               _ body: (UnsafeRawBufferPointer, _ dropFilePages: @escaping @Sendable () -> Void) throws(ImagingError) -> R)
        throws(ImagingError) -> R {
        let bytes = file.bytes
        let extents: [Range<Int>]
        do { extents = try container.extents(of: tile) } catch { throw failure(error.description) }
        // Coded units may straddle extents only in a file split oddly; those are joined first.
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
        // The library copies the coded bytes, so the file's pages of them go before the picture is
        // allocated (a single-picture HEIC's slice is megabytes). A failure leaves the tile with
        // its decoder, which gives it back on its next decode or when it goes.
        let file = file
        return try body(data) { for e in extents { file.release(e) } }
    }

    /// A decoded tile's planes cut to `width`×`height`, with the colour the container or the stream states.
    private func planar(_ decoded: DecodedTile, tile: HEIFContainer.ItemID, picture: Picture, width: Int, height: Int) throws(ImagingError) -> PlanarImage {
        guard decoded.width >= width, decoded.height >= height else {
            throw failure("tile \(tile) is \(decoded.width)×\(decoded.height), smaller than its declared size")
        }
        // The container's colour first; then what the stream says; then BT.601 at full range.
        let (matrix, full) = picture.colour ?? decoded.colour ?? (6, true)
        var (model, planes) = (decoded.model, decoded.planes)
        if matrix == 0, model != .gray {
            // The identity matrix: the planes are G, B and R, never subsampled.
            guard model == .ycbcr(subsampleX: 1, subsampleY: 1) else { throw failure("the identity matrix with subsampled chroma") }
            (model, planes) = (.rgb, [planes[2], planes[0], planes[1]])
        }
        guard let coefficients = PlanarImage.coefficients(matrix: matrix) else { throw failure("YCbCr matrix \(matrix)") }
        return PlanarImage(width: width, height: height, model: model, planes: planes, bits: decoded.bits,
                           fullRange: full, coefficients: coefficients)
    }

    private func failure(_ reason: String) -> ImagingError { ImagingError(path: path, reason: .corrupt(reason)) }
}
