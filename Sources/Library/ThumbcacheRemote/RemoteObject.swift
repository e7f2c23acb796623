import FoundationEssentials
import ThumbcacheImaging
import ThumbcacheStore

/// A thumbnail as it travels to and from a remote tier: the PNG the store keeps, its header, and
/// the attributes decoding found for the index, so that a machine that downloads it indexes the
/// file as fully as the one that decoded it.
///
/// On the wire it is the PNG itself with one private ancillary chunk, `tcAt`, before `IEND`
/// (Docs/FORMAT.md, "Remote objects"): any PNG reader (a browser behind a CDN) shows it as is,
/// and taking the chunk out gives back the stored bytes exactly.
package struct RemoteThumbnail: Sendable, Hashable {
    package var header: ThumbnailHeader
    /// The encoded image, byte for byte as stored.
    package var data: [UInt8]
    /// What decoding the source read (pixel size, EXIF, duration, pages…), if known.
    package var attributes: ImageInfo?

    package init(header: ThumbnailHeader, data: [UInt8], attributes: ImageInfo?) {
        self.header = header
        self.data = data
        self.attributes = attributes
    }

    static let chunkType = "tcAt"
    static let chunkVersion: UInt8 = 1
    /// Attributes larger than this are not shipped (EXIF is a few KB; a hostile object is not trusted to be small).
    static let maxAttributes = 64 << 10
    /// The largest object a reader accepts: a 1024 px thumbnail's PNG with room to spare.
    package static let maxObjectSize = 16 << 20

    /// The object to upload.
    package func object() throws(RemoteError.Reason) -> [UInt8] {
        try Self.object(header: header, data: data, attributesJSON: Self.encodeAttributes(attributes))
    }

    /// The object of a stored thumbnail whose attributes are already encoded (as the upload
    /// queue keeps them): they go in as they are.
    package static func object(header: ThumbnailHeader, data: [UInt8], attributesJSON json: [UInt8]) throws(RemoteError.Reason) -> [UInt8] {
        var payload = ByteBuilder()
        payload.u8(chunkVersion)
        let head = header.encoded
        payload.u16(UInt16(head.count))
        payload.append(head)
        let shipped = json.count <= maxAttributes ? json : []
        payload.u32(UInt32(shipped.count))
        payload.append(shipped)
        guard header.encoding == .png, let object = PNGChunks.inserting(chunkType, payload.bytes, beforeEndOf: data) else {
            throw .corruptObject("only PNG thumbnails travel")
        }
        return object
    }

    /// Reads and checks an object fetched for `key`: a well-formed PNG (every chunk's CRC), one
    /// `tcAt` chunk whose header is a thumbnail of `key`'s kind inside `key`'s box, and pixels
    /// that decode to the size the header states. Returns the thumbnail and its decoded pixels.
    package static func parse(_ object: [UInt8], for key: ThumbnailKey) throws(RemoteError.Reason) -> (RemoteThumbnail, RGBAImage) {
        guard object.count <= maxObjectSize else { throw .corruptObject("\(object.count) bytes, more than a thumbnail can be") }
        let stored: [UInt8]
        let chunks: [[UInt8]]
        do {
            // The image data's CRCs are checked by the decode below.
            (stored, chunks) = try PNGChunks.extracting(chunkType, from: object, checkingImageData: false)
        } catch {
            throw .corruptObject(error.description)
        }
        guard chunks.count == 1, let ours = chunks.first else { throw .corruptObject("\(chunks.count) tcAt chunks, not one: not a thumbcache object") }
        let (header, attributes) = try readChunk(ours)
        guard header.encoding == .png, header.kind == key.variant.kind else {
            throw .corruptObject("a \(header.kind) in \(header.encoding), not a \(key.variant.kind) in PNG")
        }
        guard header.pixelWidth >= 1, header.pixelHeight >= 1, header.pixelWidth <= key.boxWidth, header.pixelHeight <= key.boxHeight else {
            throw .corruptObject("\(header.pixelWidth)×\(header.pixelHeight) does not fit the box \(key.boxWidth)×\(key.boxHeight)")
        }
        let image: RGBAImage
        do {
            image = try ImageDecoder.png(stored, name: "remote object", maxPixels: Int(key.boxWidth) * Int(key.boxHeight))
        } catch {
            throw .corruptObject("its PNG does not decode: \(error.reason)")
        }
        guard image.width == header.pixelWidth, image.height == header.pixelHeight else {
            throw .corruptObject("its PNG is \(image.width)×\(image.height), its header says \(header.pixelWidth)×\(header.pixelHeight)")
        }
        return (RemoteThumbnail(header: header, data: stored, attributes: attributes), image)
    }

    private static func readChunk(_ bytes: [UInt8]) throws(RemoteError.Reason) -> (ThumbnailHeader, ImageInfo?) {
        guard bytes.count >= 3, bytes[0] == chunkVersion else { throw .corruptObject("tcAt version \(bytes.first ?? 0) is not known") }
        let headLength = Int(bytes[1]) << 8 | Int(bytes[2])
        guard 3 + headLength + 4 <= bytes.count else { throw .corruptObject("tcAt is cut short") }
        let parsed = bytes[3..<(3 + headLength)].withUnsafeBytes { ThumbnailHeader.decode($0) }
        guard let (header, rest) = parsed, rest.isEmpty else { throw .corruptObject("tcAt's thumbnail header does not parse") }
        var at = 3 + headLength
        let attributesLength = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
        at += 4
        guard attributesLength <= maxAttributes, at + attributesLength == bytes.count else { throw .corruptObject("tcAt's attributes are cut short") }
        guard attributesLength > 0 else { return (header, nil) }
        do {
            return (header, try JSONDecoder().decode(ImageInfo.self, from: Data(bytes[at...])))
        } catch {
            throw .corruptObject("tcAt's attributes do not parse")
        }
    }

    static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }

    /// The attributes as the upload queue keeps them until the upload.
    package static func encodeAttributes(_ info: ImageInfo?) -> [UInt8] {
        info.flatMap { try? encoder.encode($0) }.map(Array.init) ?? []
    }
}

/// Big-endian bytes for the chunk payload.
struct ByteBuilder {
    var bytes: [UInt8] = []
    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(truncatingIfNeeded: v)] }
    mutating func u32(_ v: UInt32) {
        bytes += [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }
    mutating func append(_ b: [UInt8]) { bytes += b }
}
