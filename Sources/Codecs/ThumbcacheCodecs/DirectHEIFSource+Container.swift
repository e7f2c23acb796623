import ThumbcacheCodecSupport
import ThumbcacheImaging

/// What the container says beside the pictures: a Motion Photo's movie, the EXIF block, the
/// orientation its transforms make.
extension DirectHEIFSource {
    /// What the XMP packet (or a Samsung trailer) says of a movie appended to the file (a Motion
    /// Photo), checked against the bytes at the file's end.
    static func motionPhoto(_ container: HEIFContainer, _ bytes: UnsafeRawBufferPointer) -> MediaMetadata? {
        var xmp: [UInt8]?
        if let id = container.xmpItem(describing: container.primary), let extents = try? container.extents(of: id),
           extents.reduce(0, { $0 + $1.count }) <= 1 << 20 {
            xmp = extents.flatMap { bytes[$0] }
        }
        let found = if let xmp { xmp.withUnsafeBytes { MotionPhoto.find(xmp: $0, mapped: bytes) } } else { MotionPhoto.find(xmp: nil, mapped: bytes) }
        guard let found else { return nil }
        var media = MediaMetadata()
        media.motionPhoto = found
        return media
    }

    /// The orientation that turns stored pixels as `transforms` do in order, found by turning a
    /// small asymmetric image both ways (the eight orientations are few; the algebra is error-prone).
    static func orientation(_ transforms: [HEIFContainer.Property]) -> Orientation? {
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
    static func exif(_ container: HEIFContainer, _ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        for id in container.items(referring: "cdsc", to: container.primary) where container.items[id]?.type == "Exif" {
            guard let extents = try? container.extents(of: id), extents.reduce(0, { $0 + $1.count }) <= 1 << 20 else { continue }
            let block = extents.flatMap { bytes[$0] }
            return block.withUnsafeBufferPointer { exifTIFF(inBox: $0) }
        }
        return nil
    }
}
