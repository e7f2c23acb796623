import CThumbcacheDav1d
import CThumbcacheDe265
import Glibc
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// The codec of a HEIF item's coded picture.
enum TileCodec: Equatable {
    case hevc, av1

    /// Whether the decoder configuration record `config` describes pictures this path decodes:
    /// HEVC at 8 to 12 bits, luma and chroma alike (its bitDepth fields, minus 8, in bytes 17 and
    /// 18), AV1 at any depth.
    func handles(_ config: UnsafeRawBufferPointer) -> Bool {
        switch self {
        case .hevc: config.count >= 23 && config[17] & 7 <= 4 && config[17] & 7 == config[18] & 7
        case .av1: config.count >= 4 && config[0] == 0x81
        }
    }

    /// The sample depth `config` states (HEVC's; an AV1 record's high_bitdepth and twelve_bit flags).
    func bits(_ config: UnsafeRawBufferPointer) -> Int {
        switch self {
        case .hevc: config.count >= 23 ? 8 + Int(config[17] & 7) : 8
        case .av1: config.count >= 3 ? (config[2] & 0x40 == 0 ? 8 : config[2] & 0x20 == 0 ? 10 : 12) : 8
        }
    }
}

/// One decoded tile: its planes, valid until ``TileDecoder/release()``.
struct DecodedTile {
    let width: Int
    let height: Int
    let model: PlanarImage.Model
    let planes: [(UnsafePointer<UInt8>, Int)]
    let bits: Int
    /// The matrix and range the stream itself states, if it does.
    let colour: (matrix: Int, fullRange: Bool)?
}

/// A codec library decoding one still tile at a time.
protocol TileDecoder: AnyObject {
    /// Decodes a tile from its configuration record and its coded bytes; a coded picture larger
    /// than `declared` (the tile's `ispe`) is refused before it is allocated. `copied` is called
    /// once the library holds its own copy of `data`, before the picture is decoded.
    func decode(config: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, tile: HEIFContainer.ItemID,
                declared: (width: Int, height: Int), copied: () -> Void) throws(ImagingError) -> DecodedTile
    /// Gives back the last tile's planes.
    func release()
}

/// libde265. The record's parameter sets and the tile's length-prefixed NAL units are pushed,
/// then the stream is ended and decoded to its one picture.
final class HEVCTileDecoder: TileDecoder {
    let path: String
    private let context: UnsafeMutableRawPointer
    private var holding = false
    /// The planes of a decode that streams, whose rows are read as they are finished.
    let streamed: StreamedPlanes?

    /// A decoder; `fast` skips the in-loop filters. A `streamed` one decodes by
    /// ``decodeStreamed(config:data:tile:declared:copied:consume:)``, into planes of its own; it
    /// must be `fast`, as the filters would change finished rows after the last block.
    init(path: String, fast: Bool, streamed: Bool = false) throws(ImagingError) {
        precondition(fast || !streamed)
        self.path = path
        guard let context = cde265_new_decoder() else {
            throw ImagingError(path: path, reason: .corrupt(cde265_load().map { String(cString: $0) } ?? "libde265: out of memory"))
        }
        self.context = context
        if fast {
            cde265_set_parameter_bool(context, DE265_DECODER_PARAM_DISABLE_DEBLOCKING, 1)
            cde265_set_parameter_bool(context, DE265_DECODER_PARAM_DISABLE_SAO, 1)
        }
        self.streamed = streamed ? StreamedPlanes() : nil
        if let planes = self.streamed {
            var functions = StreamedPlanes.allocation
            cde265_set_image_allocation_functions(context, &functions, Unmanaged.passUnretained(planes).toOpaque())
        }
    }

    deinit {
        release()
        cde265_free_decoder(context)
    }

    private func failure(_ reason: String) -> ImagingError { ImagingError(path: path, reason: .corrupt(reason)) }

    func decode(config: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, tile: HEIFContainer.ItemID,
                declared: (width: Int, height: Int), copied: () -> Void) throws(ImagingError) -> DecodedTile {
        release()
        cde265_reset(context)
        try HEVCBitstream.forEachNAL(config: config, data: data, tile: tile, declared: declared, path: path) { nal, length throws(ImagingError) in
            let type = nal.load(as: UInt8.self) >> 1 & 0x3F
            if type == 34, let streamed, HEVCBitstream.usesTiles(pps: UnsafeRawBufferPointer(start: nal, count: length)) != false {
                streamed.sawTiles()
            }
            let error = cde265_push_NAL(context, nal, Int32(length), 0, nil)
            guard cde265_isOK(error) != 0 else { throw failure("libde265: \(String(cString: cde265_get_error_text(error)))") }
        }
        copied()
        guard cde265_isOK(cde265_flush_data(context)) != 0 else { throw failure("libde265 refused the end of tile \(tile)") }
        var more: Int32 = 1
        var image = cde265_get_next_picture(context)
        while image == nil, more != 0 {
            let error = cde265_decode(context, &more)
            image = cde265_get_next_picture(context)
            guard image != nil || cde265_isOK(error) != 0 || error == DE265_ERROR_WAITING_FOR_INPUT_DATA else {
                throw failure("libde265: \(String(cString: cde265_get_error_text(error)))")
            }
        }
        guard let image else { throw failure("tile \(tile) decoded to no picture") }
        holding = true
        let model = Self.model(cde265_get_chroma_format(image))
        // Above 8 bits a sample takes two bytes; one depth for every plane, as the record said.
        let bits = Int(cde265_get_bits_per_pixel(image, 0))
        var planes: [(UnsafePointer<UInt8>, Int)] = []
        for c in 0..<(model == .gray ? 1 : 3) {
            var stride: Int32 = 0
            guard cde265_get_bits_per_pixel(image, Int32(c)) == bits, (8...12).contains(bits),
                  let p = cde265_get_image_plane(image, Int32(c), &stride) else {
                throw failure("tile \(tile)'s planes are not all of one depth from 8 to 12 bits")
            }
            planes.append((p, Int(stride)))
        }
        return DecodedTile(width: Int(cde265_get_image_width(image, 0)), height: Int(cde265_get_image_height(image, 0)),
                           model: model, planes: planes, bits: bits, colour: nil)
    }

    /// The planes of a libde265 chroma format.
    static func model(_ chroma: de265_chroma) -> PlanarImage.Model {
        switch chroma {
        case de265_chroma_mono: .gray
        case de265_chroma_420: .ycbcr(subsampleX: 2, subsampleY: 2)
        case de265_chroma_422: .ycbcr(subsampleX: 2, subsampleY: 1)
        default: .ycbcr(subsampleX: 1, subsampleY: 1)
        }
    }

    func release() {
        if holding { cde265_release_next_picture(context) }
        holding = false
    }
}

/// What thumbcache reads of an HEVC stream itself, for either decoder: its NAL units from a HEIF
/// item, and the few parameter-set fields it checks before a decoder allocates anything.
enum HEVCBitstream {
    /// The bytes of the planes of an HEVC picture of `pixels` that `config` describes: its
    /// chroma_format_idc (byte 16) gives samples a pixel, its depth two bytes a sample above 8 bits.
    static func planeBytes(_ config: UnsafeRawBufferPointer, pixels: Int) -> Int {
        guard config.count >= 23 else { return Int.max }
        let halves = [2, 3, 4, 6][Int(config[16] & 3)]
        return pixels * halves / 2 * (TileCodec.hevc.bits(config) > 8 ? 2 : 1)
    }

    /// Each NAL unit of a tile, in decoding order: the parameter sets of its configuration record,
    /// then its coded bytes' length-prefixed units. A sequence parameter set may state a picture
    /// larger than the declared one only by the padding to a coding block (at most 64 pixels),
    /// which is checked before a decoder allocates it.
    static func forEachNAL(config: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, tile: HEIFContainer.ItemID,
                           declared: (width: Int, height: Int), path: String,
                           _ body: (UnsafeRawPointer, Int) throws(ImagingError) -> Void) throws(ImagingError) {
        func failure(_ reason: String) -> ImagingError { ImagingError(path: path, reason: .corrupt(reason)) }
        func visit(_ nal: UnsafeRawPointer, _ length: Int) throws(ImagingError) {
            guard length > 0 else { return }
            if nal.load(as: UInt8.self) >> 1 & 0x3F == 33,
               let size = pictureSize(sps: UnsafeRawBufferPointer(start: nal, count: length)),
               size.width > (declared.width + 63) / 64 * 64 || size.height > (declared.height + 63) / 64 * 64 {
                throw failure("tile \(tile) codes a \(size.width)×\(size.height) picture, larger than its declared \(declared.width)×\(declared.height)")
            }
            try body(nal, length)
        }
        // The record: 22 bytes of profile and sizes (the NAL length size in the last two bits of
        // byte 21), then arrays of parameter-set NAL units, each with a 16-bit length.
        guard config.count >= 23 else { throw failure("tile \(tile)'s HEVC configuration ends early") }
        let lengthSize = Int(config[21] & 3) + 1
        var at = 23
        for _ in 0..<Int(config[22]) {
            guard at + 3 <= config.count else { throw failure("tile \(tile)'s HEVC configuration ends early") }
            let count = Int(config[at + 1]) << 8 | Int(config[at + 2])
            at += 3
            for _ in 0..<count {
                guard at + 2 <= config.count else { throw failure("tile \(tile)'s HEVC configuration ends early") }
                let length = Int(config[at]) << 8 | Int(config[at + 1])
                at += 2
                guard length <= config.count - at else { throw failure("tile \(tile)'s HEVC configuration ends early") }
                try visit(config.baseAddress! + at, length)
                at += length
            }
        }
        at = 0
        while at < data.count {
            guard lengthSize <= data.count - at else { throw failure("tile \(tile) ends inside a NAL unit's length") }
            var length = 0
            for i in 0..<lengthSize { length = length << 8 | Int(data[at + i]) }
            at += lengthSize
            guard length <= data.count - at else { throw failure("tile \(tile) is truncated") }
            try visit(data.baseAddress! + at, length)
            at += length
        }
    }

    /// The payload of a parameter set NAL unit after its 2-byte header, without emulation-prevention
    /// bytes (00 00 03); what is read of one comes within the first few dozen bytes.
    private static func payload(_ nal: UnsafeRawBufferPointer) -> BitReader {
        var rbsp: [UInt8] = []
        var zeros = 0
        for b in nal.dropFirst(2).prefix(128) {
            if zeros >= 2 && b == 3 {
                zeros = 0
                continue
            }
            rbsp.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return BitReader(bytes: rbsp)
    }

    /// Whether a picture parameter set NAL unit turns on tiles (H.265 7.3.2.3.1), or nil where
    /// it does not parse.
    static func usesTiles(pps nal: UnsafeRawBufferPointer) -> Bool? {
        var bits = payload(nal)
        // The two set ids; dependent slices, output flag, 3 extra slice-header bits, sign hiding,
        // CABAC init; two reference counts, init_qp; constrained intra, transform skip.
        guard bits.golomb() != nil, bits.golomb() != nil else { return nil }
        bits.skip(7)
        guard bits.golomb() != nil, bits.golomb() != nil, bits.golomb() != nil else { return nil }
        bits.skip(2)
        // cu_qp_delta and its depth, the two chroma offsets; then four flags before tiles'.
        if bits.read(1) == 1, bits.golomb() == nil { return nil }
        guard bits.golomb() != nil, bits.golomb() != nil else { return nil }
        bits.skip(4)
        return bits.read(1).map { $0 == 1 }
    }

    /// The luma size a sequence parameter set NAL unit states (H.265 7.3.2.2), or nil where it
    /// does not parse (libde265 then judges it).
    static func pictureSize(sps nal: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        var bits = payload(nal)
        bits.skip(4)  // sps_video_parameter_set_id
        guard let subLayers = bits.read(3) else { return nil }
        // The temporal-nesting flag, then profile_tier_level: 88 bits of general profile and 8 of
        // level, two flags per sub-layer padded to eight, then each sub-layer's own.
        bits.skip(1 + 96)
        var present: [(profile: Bool, level: Bool)] = []
        for _ in 0..<subLayers { present.append((bits.read(1) == 1, bits.read(1) == 1)) }
        if subLayers > 0 { bits.skip(2 * (8 - subLayers)) }
        for p in present { bits.skip((p.profile ? 88 : 0) + (p.level ? 8 : 0)) }
        guard bits.golomb() != nil, let chroma = bits.golomb() else { return nil }
        if chroma == 3 { bits.skip(1) }
        guard let width = bits.golomb(), let height = bits.golomb() else { return nil }
        return (width, height)
    }
}

/// Big-endian bits of a byte array; reads past the end give nil.
private struct BitReader {
    let bytes: [UInt8]
    var position = 0

    mutating func skip(_ n: Int) { position += n }

    mutating func read(_ n: Int) -> Int? {
        guard position + n <= bytes.count * 8 else { return nil }
        var v = 0
        for _ in 0..<n {
            v = v << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
            position += 1
        }
        return v
    }

    /// An unsigned Exp-Golomb code, ue(v); nil past the end or beyond 31 leading zeros.
    mutating func golomb() -> Int? {
        var zeros = 0
        while true {
            guard let bit = read(1) else { return nil }
            if bit == 1 { break }
            zeros += 1
            guard zeros <= 31 else { return nil }
        }
        guard let rest = read(zeros) else { return nil }
        return (1 << zeros) - 1 + rest
    }
}

/// dav1d, on one thread (the pool runs one decode per core), refusing frames larger than the
/// tile's declared size before allocating them. The record's configuration OBUs go first.
final class AV1TileDecoder: TileDecoder {
    private let path: String
    private let context: OpaquePointer
    private var picture = Dav1dPicture()
    private var holding = false

    init(path: String, fast: Bool, maxPixels: Int) throws(ImagingError) {
        self.path = path
        var settings = Dav1dSettings()
        cdav1d_default_settings(&settings)
        settings.n_threads = 1
        settings.max_frame_delay = 1
        settings.frame_size_limit = UInt32(clamping: maxPixels)
        if fast {
            settings.inloop_filters = DAV1D_INLOOPFILTER_NONE
            settings.apply_grain = 0
        }
        var context: OpaquePointer?
        guard cdav1d_open(&context, &settings) == 0, let context else {
            throw ImagingError(path: path, reason: .corrupt(cdav1d_load().map { String(cString: $0) } ?? "dav1d: cannot start"))
        }
        self.context = context
    }

    deinit {
        release()
        var c: OpaquePointer? = context
        cdav1d_close(&c)
    }

    private func failure(_ reason: String) -> ImagingError { ImagingError(path: path, reason: .corrupt(reason)) }

    func decode(config: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, tile: HEIFContainer.ItemID,
                declared: (width: Int, height: Int), copied: () -> Void) throws(ImagingError) -> DecodedTile {
        release()
        cdav1d_flush(context)
        guard config.count >= 4 else { throw failure("tile \(tile)'s AV1 configuration ends early") }
        var input = Dav1dData()
        let size = config.count - 4 + data.count
        guard size > 0, let buffer = cdav1d_data_create(&input, size) else { throw failure("tile \(tile) is empty") }
        UnsafeMutableRawPointer(buffer).copyMemory(from: config.baseAddress! + 4, byteCount: config.count - 4)
        if data.count > 0 { (UnsafeMutableRawPointer(buffer) + config.count - 4).copyMemory(from: data.baseAddress!, byteCount: data.count) }
        copied()
        defer { cdav1d_data_unref(&input) }
        var got = false
        // Send until the data is taken, taking a picture whenever dav1d has one; then drain.
        for _ in 0..<64 where !got {
            if input.sz > 0 {
                let sent = cdav1d_send_data(context, &input)
                guard sent == 0 || sent == -EAGAIN else { throw failure("dav1d refused tile \(tile) (\(-sent))") }
            }
            let r = cdav1d_get_picture(context, &picture)
            if r == 0 { got = true } else if r != -EAGAIN { throw failure("dav1d: tile \(tile) does not decode (\(-r))") }
        }
        guard got else { throw failure("tile \(tile) decoded to no picture") }
        holding = true
        let model: PlanarImage.Model
        switch picture.p.layout {
        case DAV1D_PIXEL_LAYOUT_I400: model = .gray
        case DAV1D_PIXEL_LAYOUT_I420: model = .ycbcr(subsampleX: 2, subsampleY: 2)
        case DAV1D_PIXEL_LAYOUT_I422: model = .ycbcr(subsampleX: 2, subsampleY: 1)
        default: model = .ycbcr(subsampleX: 1, subsampleY: 1)
        }
        let pointers = [picture.data.0, picture.data.1, picture.data.2]
        var planes: [(UnsafePointer<UInt8>, Int)] = []
        for c in 0..<(model == .gray ? 1 : 3) {
            guard let p = pointers[c] else { throw failure("tile \(tile) has no plane \(c)") }
            planes.append((UnsafePointer(p.assumingMemoryBound(to: UInt8.self)), c == 0 ? picture.stride.0 : picture.stride.1))
        }
        let colour = picture.seq_hdr.map { (matrix: Int($0.pointee.mtrx.rawValue), fullRange: $0.pointee.color_range != 0) }
        return DecodedTile(width: Int(picture.p.w), height: Int(picture.p.h), model: model, planes: planes,
                           bits: Int(picture.p.bpc), colour: colour)
    }

    func release() {
        if holding { cdav1d_picture_unref(&picture) }
        holding = false
    }
}
