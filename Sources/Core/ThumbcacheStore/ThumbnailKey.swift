/// Which representation of a file a thumbnail is, after QuickLook's representation types.
public enum RepresentationKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A generic icon for the file's type.
    case icon = 1
    /// A fast, lower-quality image (such as the embedded EXIF thumbnail).
    case lowQuality = 2
    /// The full-quality thumbnail.
    case thumbnail = 3
    /// A large look at one page of the file (a screen's size), after Quick Look's preview.
    case preview = 4

    public var description: String {
        switch self {
        case .icon: "icon"
        case .lowQuality: "low-quality"
        case .thumbnail: "thumbnail"
        case .preview: "preview"
        }
    }
}

/// How the image is placed in the pixel box.
package enum FitMode: UInt8, Sendable, Hashable {
    /// The whole image, aspect ratio kept, inside the box.
    case fit = 0
    /// The box filled, the image cropped to it.
    case fill = 1
}

/// Colour handling during resampling.
package enum ColorHandling: UInt8, Sendable, Hashable {
    /// Resample the stored (gamma-encoded sRGB) values.
    case gammaEncoded = 0
    /// Resample in linear light.
    case linearLight = 1
}

/// Everything besides the content and the box that changes a thumbnail's pixels.
///
/// Packed exactly (not hashed) into the key's last 8 bytes, so two variants can never collide.
package struct ThumbnailVariant: Sendable, Hashable {
    package var kind: RepresentationKind
    package var fit: FitMode
    package var color: ColorHandling
    /// Bumped whenever the generator's output for the same input changes.
    package var generatorVersion: UInt32
    /// The page a preview shows, 0 the first; always 0 for the other kinds (a thumbnail is of
    /// the first page).
    package var page: UInt32

    /// The most pages a preview key can name (its page takes the 24 bits a thumbnail's fit and
    /// colour use).
    package static let pageLimit: UInt32 = 1 << 24

    package init(kind: RepresentationKind = .thumbnail, fit: FitMode = .fit, color: ColorHandling = .gammaEncoded, generatorVersion: UInt32,
                 page: UInt32 = 0) {
        precondition(page == 0 || (kind == .preview && page < Self.pageLimit), "only a preview names a page, below 2^24")
        self.kind = kind
        // A preview is always fitted and gamma-encoded: its key has no room for either.
        self.fit = kind == .preview ? .fit : fit
        self.color = kind == .preview ? .gammaEncoded : color
        self.generatorVersion = generatorVersion
        self.page = page
    }

    /// The 8-byte fingerprint stored in keys (big-endian): kind, then fit, colour and a reserved
    /// zero byte (a preview: its page, u24), then the generator version.
    package var fingerprint: UInt64 {
        let middle = kind == .preview ? UInt64(page) : UInt64(fit.rawValue) << 16 | UInt64(color.rawValue) << 8
        return UInt64(kind.rawValue) << 56 | middle << 32 | UInt64(generatorVersion)
    }

    package init?(fingerprint f: UInt64) {
        guard let kind = RepresentationKind(rawValue: UInt8(f >> 56)) else { return nil }
        if kind == .preview {
            self.init(kind: kind, generatorVersion: UInt32(truncatingIfNeeded: f), page: UInt32(truncatingIfNeeded: f >> 32) & 0xFF_FFFF)
            return
        }
        guard let fit = FitMode(rawValue: UInt8(truncatingIfNeeded: f >> 48)),
            let color = ColorHandling(rawValue: UInt8(truncatingIfNeeded: f >> 40))
        else { return nil }
        self.init(kind: kind, fit: fit, color: color, generatorVersion: UInt32(truncatingIfNeeded: f))
    }
}

/// The key of a thumbnail: content hash + pixel box + variant.
///
/// Encoded in 32 bytes, big-endian, so that all thumbnails of one content are neighbours,
/// ordered by box width then height (the size ladder is one cursor range).
package struct ThumbnailKey: Sendable, Hashable, CustomStringConvertible {
    package var content: ContentHash
    /// Width of the pixel box (point size × scale).
    package var boxWidth: UInt32
    /// Height of the pixel box (point size × scale).
    package var boxHeight: UInt32
    package var variant: ThumbnailVariant

    @usableFromInline package static let encodedSize = 32

    package init(content: ContentHash, boxWidth: UInt32, boxHeight: UInt32, variant: ThumbnailVariant) {
        self.content = content
        self.boxWidth = boxWidth
        self.boxHeight = boxHeight
        self.variant = variant
    }

    package var bytes: [UInt8] {
        withEncoded { Array($0) }
    }

    /// Calls `body` with the 32-byte encoding in a stack buffer (no allocation).
    @inlinable
    package func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Self.encodedSize, alignment: 8) { buffer in
            buffer.storeBytes(of: content.high.bigEndian, toByteOffset: 0, as: UInt64.self)
            buffer.storeBytes(of: content.low.bigEndian, toByteOffset: 8, as: UInt64.self)
            buffer.storeBytes(of: boxWidth.bigEndian, toByteOffset: 16, as: UInt32.self)
            buffer.storeBytes(of: boxHeight.bigEndian, toByteOffset: 20, as: UInt32.self)
            buffer.storeBytes(of: variant.fingerprint.bigEndian, toByteOffset: 24, as: UInt64.self)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.encodedSize else { return nil }
        var r = ByteReader(bytes)
        guard let content = r.hash(), let w = r.u32BE(), let h = r.u32BE(), let f = r.u64BE(),
            let variant = ThumbnailVariant(fingerprint: f)
        else { return nil }
        self.init(content: content, boxWidth: w, boxHeight: h, variant: variant)
    }

    package var description: String {
        let page = variant.kind == .preview ? "/page\(variant.page + 1)" : ""
        return "\(content.hex)@\(boxWidth)x\(boxHeight)/\(variant.kind)\(page)/v\(variant.generatorVersion)"
    }
}
