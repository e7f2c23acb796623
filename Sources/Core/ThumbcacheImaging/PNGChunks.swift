/// A PNG's chunk sequence walked without libpng, every CRC checked: a private chunk put in
/// before `IEND`, or taken out again leaving the other bytes exactly as they were.
package enum PNGChunks {
    /// Why the bytes are not a well-formed chunk sequence.
    package struct Malformed: Error, CustomStringConvertible {
        package var description: String
    }

    /// `png` with a chunk of `type` holding `data` just before its `IEND`; nil if `png` does
    /// not end with one.
    package static func inserting(_ type: String, _ data: [UInt8], beforeEndOf png: [UInt8]) -> [UInt8]? {
        let iend = PNGText.chunk("IEND", [])
        guard png.count >= PNGText.signature.count + iend.count, png.starts(with: PNGText.signature), png.suffix(iend.count).elementsEqual(iend)
        else { return nil }
        return png.dropLast(iend.count) + PNGText.chunk(type, data) + iend
    }

    /// Checks every chunk's length and CRC up to `IEND` (which must end the bytes) and returns
    /// the PNG without the chunks of `type`, and their data in order.
    /// - Parameter checkingImageData: false leaves the CRCs of `IDAT` to libpng, which checks
    ///   them as it decodes (they are most of the bytes, and a decode follows anyway).
    package static func extracting(_ type: String, from png: [UInt8], checkingImageData: Bool = true) throws(Malformed)
        -> (png: [UInt8], chunks: [[UInt8]])
    {
        guard png.starts(with: PNGText.signature) else { throw Malformed(description: "not a PNG") }
        let wanted = Array(type.utf8)
        var rest = PNGText.signature
        rest.reserveCapacity(png.count)
        var found: [[UInt8]] = []
        var offset = PNGText.signature.count
        while offset + 12 <= png.count {
            let length = Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
            guard length <= png.count - offset - 12 else { break }
            let end = offset + 12 + length
            let chunkType = png[(offset + 4)..<(offset + 8)]
            let crc = png[(end - 4)..<end].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard !checkingImageData && chunkType.elementsEqual("IDAT".utf8) || CRC32.of(png[(offset + 4)..<(end - 4)]) == crc else {
                throw Malformed(description: "chunk \(String(decoding: chunkType, as: UTF8.self)) fails its CRC")
            }
            if chunkType.elementsEqual(wanted) { found.append(Array(png[(offset + 8)..<(end - 4)])) } else { rest += png[offset..<end] }
            offset = end
            if chunkType.elementsEqual("IEND".utf8) {
                guard offset == png.count else { throw Malformed(description: "bytes after IEND") }
                return (rest, found)
            }
        }
        throw Malformed(description: "a chunk is cut short at byte \(offset)")
    }
}
