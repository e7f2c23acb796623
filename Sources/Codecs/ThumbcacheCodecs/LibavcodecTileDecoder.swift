import CThumbcacheAVCodec
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// FFmpeg's HEVC decoder (libavcodec, loaded at the first tile): libde265's pixels, with or
/// without the in-loop filters, in about three quarters of its time. The tile's NAL units go to it
/// as one Annex B picture.
final class LibavcodecTileDecoder: TileDecoder {
    let path: String
    private let decoder: OpaquePointer
    /// The Annex B picture being decoded, kept for the next tile's.
    private var stream: [UInt8] = []

    /// A decoder; `fast` skips the in-loop filters. Nil where libavcodec cannot be loaded (a
    /// system without it, or another major version than the one built against).
    init?(path: String, fast: Bool) {
        guard let decoder = cavc_hevc_new(fast ? 1 : 0) else { return nil }
        self.path = path
        self.decoder = decoder
    }

    deinit { cavc_hevc_free(decoder) }

    func decode(config: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, tile: HEIFContainer.ItemID,
                declared: (width: Int, height: Int), copied: () -> Void) throws(ImagingError) -> DecodedTile {
        release()
        stream.removeAll(keepingCapacity: true)
        stream.reserveCapacity(config.count + data.count + 64)
        try HEVCBitstream.forEachNAL(config: config, data: data, tile: tile, declared: declared, path: path) { nal, length in
            stream += [0, 0, 0, 1]
            stream.append(contentsOf: UnsafeRawBufferPointer(start: nal, count: length))
        }
        copied()
        var picture = cavc_picture()
        var message = [CChar](repeating: 0, count: 256)
        let maxPixels = (declared.width + 63) / 64 * 64 * ((declared.height + 63) / 64 * 64)
        let status = stream.withUnsafeBufferPointer {
            cavc_hevc_decode(decoder, $0.baseAddress, $0.count, Int64(maxPixels), &picture, &message, message.count)
        }
        guard status == 0 else { throw ImagingError(path: path, reason: .corrupt("tile \(tile): \(cText(message))")) }
        let model: PlanarImage.Model =
            switch picture.chroma {
            case 0: .gray
            case 1: .ycbcr(subsampleX: 2, subsampleY: 2)
            case 2: .ycbcr(subsampleX: 2, subsampleY: 1)
            default: .ycbcr(subsampleX: 1, subsampleY: 1)
            }
        let pointers = [picture.planes.0, picture.planes.1, picture.planes.2], strides = [picture.strides.0, picture.strides.1, picture.strides.2]
        var planes: [(UnsafePointer<UInt8>, Int)] = []
        for c in 0..<(model == .gray ? 1 : 3) {
            guard let p = pointers[c] else { throw ImagingError(path: path, reason: .corrupt("tile \(tile) decoded without its planes")) }
            planes.append((p, Int(strides[c])))
        }
        return DecodedTile(width: Int(picture.width), height: Int(picture.height), model: model, planes: planes,
                           bits: Int(picture.bits), colour: nil)
    }

    func release() { cavc_hevc_release(decoder) }
}
