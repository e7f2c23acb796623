import CHEIF
import ThumbcacheImaging

/// HEIF (HEVC-coded, `public.heic`) and AVIF through libheif: the primary image, or its embedded
/// thumbnail when that is at least the output size. libheif applies the transforms (irot, imir)
/// as it decodes, so EXIF's orientation, which HEIF says to ignore, is not applied again.
final class HEIFSource: RowSource {
    private let path: String
    private let file: MappedFile
    private let context: OpaquePointer
    private let primary: OpaquePointer
    let header: RowSourceHeader
    private var output = RGBABuffer()

    /// Sides above this are refused by libheif before it allocates (its own default is larger).
    static let maximumSide: Int32 = 32768

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        guard let context = heif_context_alloc() else { throw ImagingError(path: name, reason: .corrupt("libheif: out of memory")) }
        self.context = context
        heif_context_set_maximum_image_size_limit(context, Self.maximumSide)
        var error = heif_context_read_from_memory_without_copy(context, file.bytes.baseAddress, file.bytes.count, nil)
        guard error.code == heif_error_Ok else {
            heif_context_free(context)
            throw ImagingError(path: name, reason: .corrupt(Self.describe(error)))
        }
        var handle: OpaquePointer?
        error = heif_context_get_primary_image_handle(context, &handle)
        guard error.code == heif_error_Ok, let handle else {
            heif_context_free(context)
            throw ImagingError(path: name, reason: .corrupt(Self.describe(error)))
        }
        primary = handle
        let frames = Int(heif_context_get_number_of_top_level_images(context))
        header = RowSourceHeader(
            width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)),
            hasAlpha: heif_image_handle_has_alpha_channel(handle) != 0, exif: Self.exif(of: handle),
            // libheif decodes the whole image; its planes and the RGBA copy are held at once.
            buffered: true, bufferedBytes: Int(heif_image_handle_get_width(handle)) * Int(heif_image_handle_get_height(handle)) * 6,
            orientation: .up, bitsPerSample: Int(heif_image_handle_get_luma_bits_per_pixel(handle)),
            colorSpace: "RGB", frameCount: frames)
    }

    deinit {
        heif_image_handle_release(primary)
        heif_context_free(context)
    }

    static func describe(_ error: heif_error) -> String {
        guard let message = error.message else { return "libheif error \(error.code.rawValue)" }
        return String(cString: message)
    }

    /// The EXIF block as TIFF bytes (HEIF prefixes it with the offset of the TIFF header).
    static func exif(of handle: OpaquePointer) -> [UInt8]? {
        var id: heif_item_id = 0
        guard heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) == 1 else { return nil }
        let size = heif_image_handle_get_metadata_size(handle, id)
        guard size > 4, size <= 1 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_metadata(handle, id, &bytes).code == heif_error_Ok else { return nil }
        let offset = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard offset >= 0, 4 + offset < size else { return nil }
        return Array(bytes[(4 + offset)...])
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        try start(shrink: shrink, fast: fast, output: (header.width, header.height))
    }

    func start(shrink: Int, fast: Bool, output size: (width: Int, height: Int)) throws(ImagingError) -> (width: Int, height: Int) {
        var handle = primary
        var thumbnail: OpaquePointer?
        defer { if let thumbnail { heif_image_handle_release(thumbnail) } }
        let count = Int(heif_image_handle_get_number_of_thumbnails(primary))
        if count > 0 {
            var ids = [heif_item_id](repeating: 0, count: min(count, 8))
            let n = Int(heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, Int32(ids.count)))
            // The smallest thumbnail at least the output size.
            var best: (OpaquePointer, Int)?
            for id in ids.prefix(n) {
                var t: OpaquePointer?
                guard heif_image_handle_get_thumbnail(primary, id, &t).code == heif_error_Ok, let t else { continue }
                let w = Int(heif_image_handle_get_width(t)), h = Int(heif_image_handle_get_height(t))
                if w >= size.width, h >= size.height, w * h < (best?.1 ?? Int.max) {
                    if let old = best?.0 { heif_image_handle_release(old) }
                    best = (t, w * h)
                } else {
                    heif_image_handle_release(t)
                }
            }
            if let best {
                thumbnail = best.0
                handle = best.0
            }
        }
        let alpha = header.hasAlpha
        let options = heif_decoding_options_alloc()
        defer { heif_decoding_options_free(options) }
        var image: OpaquePointer?
        let error = heif_decode_image(handle, &image, heif_colorspace_RGB, alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB,
                                      options)
        guard error.code == heif_error_Ok, let image else { throw ImagingError(path: path, reason: .corrupt(Self.describe(error))) }
        defer { heif_image_release(image) }
        let w = Int(heif_image_get_width(image, heif_channel_interleaved)), h = Int(heif_image_get_height(image, heif_channel_interleaved))
        var stride: Int32 = 0
        guard w > 0, h > 0, let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
            throw ImagingError(path: path, reason: .corrupt("libheif gave no pixels"))
        }
        var rgba = RGBABuffer(width: w, height: h)
        rgba.pixels.withUnsafeMutableBufferPointer { out in
            for y in 0..<h {
                let row = plane + y * Int(stride)
                let to = out.baseAddress! + y * w * 4
                if alpha {
                    to.update(from: row, count: w * 4)
                } else {
                    for x in 0..<w {
                        to[x * 4] = row[x * 3]
                        to[x * 4 + 1] = row[x * 3 + 1]
                        to[x * 4 + 2] = row[x * 3 + 2]
                        to[x * 4 + 3] = 255
                    }
                }
            }
        }
        output = rgba
        return (w, h)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        output.feed(sink)
        output = RGBABuffer()
    }
}
