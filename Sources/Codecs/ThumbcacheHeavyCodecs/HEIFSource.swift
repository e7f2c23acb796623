import CThumbcacheHEIF
import ThumbcacheCodecSupport
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
    /// The decoded image, released when its rows have been read.
    private var image: OpaquePointer?
    private var rows: Rows?
    /// 1, or 2 when native planes are averaged 2×2 as they are converted.
    private var shrink = 1

    /// Sides above this are refused by libheif before it allocates (its own default is larger).
    static let maximumSide: Int32 = 32768

    /// Reads the file mapped as `file` (the mapping the direct path looked at first).
    init(file: MappedFile, name: String) throws(ImagingError) {
        path = name
        self.file = file
        guard let context = heif_context_alloc() else { throw ImagingError(path: name, reason: .corrupt("libheif: out of memory")) }
        self.context = context
        heif_context_set_maximum_image_size_limit(context, Self.maximumSide)
        var error = heif_context_read_from_memory_without_copy(context, file.bytes.baseAddress, file.bytes.count, nil)
        guard error.code == heif_error_Ok else {
            // The message lives in the context: read it before the context goes.
            let reason = Self.describe(error)
            heif_context_free(context)
            throw ImagingError(path: name, reason: .corrupt(reason))
        }
        var handle: OpaquePointer?
        error = heif_context_get_primary_image_handle(context, &handle)
        guard error.code == heif_error_Ok, let handle else {
            let reason = Self.describe(error)
            heif_context_free(context)
            throw ImagingError(path: name, reason: .corrupt(reason))
        }
        primary = handle
        let frames = Int(heif_context_get_number_of_top_level_images(context))
        let (width, height) = (Int(heif_image_handle_get_width(handle)), Int(heif_image_handle_get_height(handle)))
        header = RowSourceHeader(
            width: width, height: height,
            hasAlpha: heif_image_handle_has_alpha_channel(handle) != 0, exif: Self.exif(of: handle),
            // A 2× pre-shrink as the planes are converted (not for the interleaved fallback).
            maxShrink: 2,
            // libheif decodes the whole image: its 4:2:0 planes are held while rows are made.
            buffered: true, bufferedBytes: width * height * 3 / 2,
            orientation: .up, bitsPerSample: Int(heif_image_handle_get_luma_bits_per_pixel(handle)),
            colorSpace: "RGB", frameCount: frames, media: Self.motionPhoto(of: handle, in: file.bytes))
    }

    /// What the primary image's XMP packet (or a Samsung trailer) says of a movie appended to the
    /// file (a Motion Photo), checked against the bytes at the file's end.
    static func motionPhoto(of handle: OpaquePointer, in file: UnsafeRawBufferPointer) -> MediaMetadata? {
        var ids = [heif_item_id](repeating: 0, count: 8)
        let count = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, "mime", &ids, Int32(ids.count)))
        for id in ids.prefix(count) {
            guard let type = heif_image_handle_get_metadata_content_type(handle, id), String(cString: type) == "application/rdf+xml" else { continue }
            let size = heif_image_handle_get_metadata_size(handle, id)
            guard size > 0, size <= 1 << 20 else { continue }
            var xmp = [UInt8](repeating: 0, count: size)
            guard heif_image_handle_get_metadata(handle, id, &xmp).code == heif_error_Ok,
                  let found = xmp.withUnsafeBytes({ MotionPhoto.find(xmp: $0, mapped: file) }) else { continue }
            var media = MediaMetadata()
            media.motionPhoto = found
            return media
        }
        // No XMP claims one: a Samsung trailer may.
        guard let found = MotionPhoto.find(xmp: nil, mapped: file) else { return nil }
        var media = MediaMetadata()
        media.motionPhoto = found
        return media
    }

    deinit {
        image.map(heif_image_release)
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
        return bytes.withUnsafeBufferPointer { exifTIFF(inBox: $0) }
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        try start(shrink: shrink, fast: fast, output: (header.width, header.height))
    }

    func start(shrink: Int, fast: Bool, output size: (width: Int, height: Int)) throws(ImagingError) -> (width: Int, height: Int) {
        let thumbnail = smallestThumbnail(atLeast: size)
        defer { thumbnail.map(heif_image_handle_release) }
        let handle = thumbnail ?? primary
        image.map(heif_image_release)
        image = nil
        // The native planes first (YCbCr at any subsampling, planar RGB, gray; 8 to 16 bits) are
        // turned into RGBA a row at a time, so the image is never held as RGB. Anything else is
        // decoded again through libheif's own conversion to interleaved RGB(A).
        let options = heif_decoding_options_alloc()
        defer { heif_decoding_options_free(options) }
        var decoded: OpaquePointer?
        var error = heif_decode_image(handle, &decoded, heif_colorspace_undefined, heif_chroma_undefined, options)
        guard error.code == heif_error_Ok, let native = decoded else { throw ImagingError(path: path, reason: .corrupt(Self.describe(error))) }
        if let planes = PlanarImage(native, alpha: header.hasAlpha) {
            image = native
            rows = .planar(planes)
            // Only where 2× is still left for the filter after it (an embedded thumbnail may be
            // smaller than the planner assumed).
            self.shrink = shrink >= 2 && planes.width >= 4 * size.width && planes.height >= 4 * size.height ? 2 : 1
            return planes.size(shrink: self.shrink)
        }
        heif_image_release(native)
        decoded = nil
        error = heif_decode_image(handle, &decoded, heif_colorspace_RGB,
                                  header.hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options)
        guard error.code == heif_error_Ok, let rgb = decoded else { throw ImagingError(path: path, reason: .corrupt(Self.describe(error))) }
        image = rgb
        let w = Int(heif_image_get_width(rgb, heif_channel_interleaved)), h = Int(heif_image_get_height(rgb, heif_channel_interleaved))
        var stride: Int32 = 0
        guard w > 0, h > 0, let plane = heif_image_get_plane_readonly(rgb, heif_channel_interleaved, &stride) else {
            throw ImagingError(path: path, reason: .corrupt("libheif gave no pixels"))
        }
        rows = .interleaved(plane, stride: Int(stride), channels: header.hasAlpha ? 4 : 3, width: w, height: h)
        return (w, h)
    }

    /// The smallest embedded thumbnail at least `size`, retained (the caller releases it), or nil.
    private func smallestThumbnail(atLeast size: (width: Int, height: Int)) -> OpaquePointer? {
        var ids = [heif_item_id](repeating: 0, count: 8)
        let n = Int(heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, Int32(ids.count)))
        var best: (handle: OpaquePointer, area: Int)?
        for id in ids.prefix(n) {
            var t: OpaquePointer?
            guard heif_image_handle_get_thumbnail(primary, id, &t).code == heif_error_Ok, let t else { continue }
            let w = Int(heif_image_handle_get_width(t)), h = Int(heif_image_handle_get_height(t))
            guard w >= size.width, h >= size.height, w * h < (best?.area ?? Int.max) else {
                heif_image_handle_release(t)
                continue
            }
            best.map { heif_image_handle_release($0.handle) }
            best = (t, w * h)
        }
        return best?.handle
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        defer {
            image.map(heif_image_release)
            image = nil
            rows = nil
        }
        switch rows {
        case .planar(let planes)?:
            let (w, h) = planes.size(shrink: shrink)
            let row = UnsafeMutablePointer<UInt8>.allocate(capacity: w * 4)
            defer { row.deallocate() }
            for y in 0..<h {
                planes.convert(row: y, shrink: shrink, into: row)
                sink(row)
            }
        case .interleaved(let plane, let stride, let channels, let width, let height)?:
            sinkInterleaved(plane, stride: stride, channels: channels, width: width, height: height, sink)
        case nil:
            break
        }
    }

    /// Where the decoded pixels are, until readRows.
    private enum Rows {
        case planar(PlanarImage)
        case interleaved(UnsafePointer<UInt8>, stride: Int, channels: Int, width: Int, height: Int)
    }
}

extension PlanarImage {
    /// libheif's decoded `image`, nil for a layout the conversion does not do.
    init?(_ image: OpaquePointer, alpha hasAlpha: Bool) {
        func plane(_ channel: heif_channel) -> (UnsafePointer<UInt8>, Int)? {
            var stride: Int32 = 0
            guard let p = heif_image_get_plane_readonly(image, channel, &stride) else { return nil }
            return (p, Int(stride))
        }
        let colorspace = heif_image_get_colorspace(image), chroma = heif_image_get_chroma_format(image)
        let channels: [heif_channel]
        let model: Model
        switch (colorspace, chroma) {
        case (heif_colorspace_YCbCr, heif_chroma_420): (model, channels) = (.ycbcr(subsampleX: 2, subsampleY: 2), [heif_channel_Y, heif_channel_Cb, heif_channel_Cr])
        case (heif_colorspace_YCbCr, heif_chroma_422): (model, channels) = (.ycbcr(subsampleX: 2, subsampleY: 1), [heif_channel_Y, heif_channel_Cb, heif_channel_Cr])
        case (heif_colorspace_YCbCr, heif_chroma_444): (model, channels) = (.ycbcr(subsampleX: 1, subsampleY: 1), [heif_channel_Y, heif_channel_Cb, heif_channel_Cr])
        case (heif_colorspace_RGB, heif_chroma_444): (model, channels) = (.rgb, [heif_channel_R, heif_channel_G, heif_channel_B])
        case (heif_colorspace_monochrome, heif_chroma_monochrome): (model, channels) = (.gray, [heif_channel_Y])
        default: return nil
        }
        let bits = Int(heif_image_get_bits_per_pixel_range(image, channels[0]))
        guard (8...16).contains(bits) else { return nil }
        var found: [(UnsafePointer<UInt8>, Int)] = []
        for c in channels {
            guard Int(heif_image_get_bits_per_pixel_range(image, c)) == bits, let p = plane(c) else { return nil }
            found.append(p)
        }
        var alpha: (UnsafePointer<UInt8>, Int)?
        if hasAlpha {
            guard Int(heif_image_get_bits_per_pixel_range(image, heif_channel_Alpha)) == bits, let a = plane(heif_channel_Alpha) else { return nil }
            alpha = a
        }
        let width = Int(heif_image_get_width(image, channels[0])), height = Int(heif_image_get_height(image, channels[0]))
        guard width > 0, height > 0 else { return nil }
        var profile: UnsafeMutablePointer<heif_color_profile_nclx>?
        var matrix = Int(heif_matrix_coefficients_ITU_R_BT_601_6.rawValue)
        var fullRange = true
        if heif_image_get_nclx_color_profile(image, &profile).code == heif_error_Ok, let profile {
            matrix = Int(profile.pointee.matrix_coefficients.rawValue)
            fullRange = profile.pointee.full_range_flag != 0
            heif_nclx_color_profile_free(profile)
        }
        let coefficients = Self.coefficients(matrix: matrix)
        if coefficients == nil, case .ycbcr = model { return nil }  // YCgCo and the rest: libheif converts those
        self.init(width: width, height: height, model: model, planes: found, alpha: alpha, bits: bits, fullRange: fullRange,
                  coefficients: coefficients ?? (0.299, 0.114))
    }
}
