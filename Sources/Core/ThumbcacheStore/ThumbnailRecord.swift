/// How a thumbnail's bytes are encoded.
public enum ThumbnailEncoding: UInt8, Sendable, Hashable, CustomStringConvertible {
    case png = 1
    case jpeg = 2
    /// Unencoded 8-bit RGBA rows, top to bottom, no padding.
    case rgba8 = 3

    public var description: String {
        switch self {
        case .png: "png"
        case .jpeg: "jpeg"
        case .rgba8: "rgba8"
        }
    }
}

/// The fixed part of a stored thumbnail, before the encoded bytes.
///
/// Layout (little-endian): version u8, encoding u8, kind u8, flags u8, pixel width u32,
/// pixel height u32, scale f32, created (ns since 1970) i64, content-type length u16,
/// content type (UTF-8), then the encoded image.
package struct ThumbnailHeader: Sendable, Hashable {
    package static let currentVersion: UInt8 = 1

    package var encoding: ThumbnailEncoding
    package var kind: RepresentationKind
    package var hasAlpha: Bool
    /// Size of the image itself (inside the key's box).
    package var pixelWidth: UInt32
    package var pixelHeight: UInt32
    /// Pixels per point.
    package var scale: Float
    /// When it was made, nanoseconds since 1970.
    package var created: Int64
    /// Content type of the source file, such as `public.jpeg`.
    package var sourceContentType: String

    package init(
        encoding: ThumbnailEncoding, kind: RepresentationKind, hasAlpha: Bool, pixelWidth: UInt32, pixelHeight: UInt32,
        scale: Float, created: Int64, sourceContentType: String
    ) {
        self.encoding = encoding
        self.kind = kind
        self.hasAlpha = hasAlpha
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.scale = scale
        self.created = created
        self.sourceContentType = sourceContentType
    }

    /// Size of the image in points (pixels ÷ scale).
    package var pointSize: (width: Double, height: Double) {
        (Double(pixelWidth) / Double(scale), Double(pixelHeight) / Double(scale))
    }

    package var encoded: [UInt8] {
        let type = Array(sourceContentType.utf8.prefix(Int(UInt16.max)))
        var w = ByteWriter(capacity: 26 + type.count)
        w.u8(Self.currentVersion)
        w.u8(encoding.rawValue)
        w.u8(kind.rawValue)
        w.u8(hasAlpha ? 1 : 0)
        w.u32(pixelWidth)
        w.u32(pixelHeight)
        w.f32(scale)
        w.i64(created)
        w.u16(UInt16(type.count))
        w.raw(type)
        return w.bytes
    }

    /// Parses a stored value: the header and a view of the encoded image that follows it.
    package static func decode(_ value: UnsafeRawBufferPointer) -> (ThumbnailHeader, UnsafeRawBufferPointer)? {
        var r = ByteReader(value)
        guard r.u8() == currentVersion,
            let encoding = r.u8().flatMap(ThumbnailEncoding.init(rawValue:)),
            let kind = r.u8().flatMap(RepresentationKind.init(rawValue:)),
            let flags = r.u8(), let width = r.u32(), let height = r.u32(), let scale = r.f32(),
            let created = r.i64(), let typeLength = r.u16(), let type = r.view(Int(typeLength))
        else { return nil }
        let header = ThumbnailHeader(
            encoding: encoding, kind: kind, hasAlpha: flags & 1 != 0, pixelWidth: width, pixelHeight: height,
            scale: scale, created: created, sourceContentType: String(decoding: type, as: UTF8.self))
        return (header, r.rest())
    }
}

/// A thumbnail read from the store, its bytes copied out.
package struct ThumbnailRecord: Sendable, Hashable {
    package var header: ThumbnailHeader
    /// The encoded image (see ``ThumbnailHeader/encoding``).
    package var data: [UInt8]

    package init(header: ThumbnailHeader, data: [UInt8]) {
        self.header = header
        self.data = data
    }
}

/// A thumbnail as stored, viewed in place: ``data`` points into the database map and is valid
/// only inside the closure that received it.
package struct ThumbnailRecordView {
    package let header: ThumbnailHeader
    package let data: UnsafeRawBufferPointer

    /// Copies the view out of the map.
    package func copy() -> ThumbnailRecord { ThumbnailRecord(header: header, data: Array(data)) }
}
