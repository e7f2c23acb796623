import CThumbcacheText
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// A font file (TrueType, OpenType, a collection's first face, WOFF, WOFF2) as QuickLook shows
/// one: "Aa" drawn in the font itself, black on a white square; a font without Latin letters
/// shows two letters of its own script. The family name is indexed (`kMDItemFonts`).
final class FontSource: DrawnSource {
    private let path: String
    private let file: MappedFile
    private let face: FontFace
    let header: RowSourceHeader
    var output = RGBABuffer()

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        face = try FontFace(file.bytes, name: name)
        var media = MediaMetadata()
        let family = face.info.family.map { String(cString: $0) }
        let style = face.info.style.map { String(cString: $0) }
        media.fonts = family.map { [$0] }
        media.title = [family, style].compactMap { $0 }.joined(separator: " ")
        header = RowSourceHeader(width: 512, height: 512, hasAlpha: false, bitsPerSample: 8, colorSpace: "RGB",
                                 frameCount: face.info.faces > 1 ? face.info.faces : nil, media: media)
    }

    func draw(width: Int, height: Int) throws(ImagingError) -> RGBABuffer {
        func sample(_ text: [UInt32]) throws(ImagingError) -> RGBABuffer {
            // ctext_draw_sample whitens the whole canvas first.
            try .drawn(width: width, height: height, path: path, writesEveryPixel: true) { pixels, message, size in
                ctext_draw_sample(face.face, text, Int32(text.count), pixels, Int32(width), Int32(height), message, size)
            }
        }
        do {
            return try sample("Aa".unicodeScalars.map(\.value))
        } catch {
            // Two letters of the font's own script rather than the dotted circle or marks many
            // non-Latin fonts map first.
            var mapped = [UInt32](repeating: 0, count: 256)
            let n = Int(ctext_mapped(face.face, &mapped, Int32(mapped.count)))
            guard n > 0 else { throw error }
            let letters = Array(mapped.prefix(n).filter(Self.isLetter))
            return try sample(Array((letters.count >= 2 ? letters : Array(mapped.prefix(n))).prefix(2)))
        }
    }

    /// A letter that stands on its own (not a combining mark).
    static func isLetter(_ codePoint: UInt32) -> Bool {
        guard let p = Unicode.Scalar(codePoint)?.properties else { return false }
        return p.isAlphabetic && p.generalCategory != .nonspacingMark && p.generalCategory != .spacingMark
    }
}
