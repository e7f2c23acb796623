import CText
import ThumbcacheImaging

/// A font file (TrueType, OpenType, a collection's first face, WOFF, WOFF2) as QuickLook shows
/// one: "Aa" drawn in the font itself, black on a white square; a font without Latin letters
/// shows two letters of its own script. The family name is indexed (`kMDItemFonts`).
final class FontSource: ScalableRowSource {
    private let path: String
    private let file: MappedFile
    private let face: FontFace
    let header: RowSourceHeader
    private var output = RGBABuffer()

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

    func start(width: Int, height: Int) throws(ImagingError) -> (width: Int, height: Int) {
        func draw(_ sample: [UInt32]) throws(ImagingError) -> RGBABuffer {
            try .drawn(width: width, height: height, path: path) { pixels, message, size in
                ctext_draw_sample(face.face, sample, Int32(sample.count), pixels, Int32(width), Int32(height), message, size)
            }
        }
        do {
            output = try draw(Array("Aa".unicodeScalars.map(\.value)))
        } catch {
            // Two letters of the font's own script rather than the dotted circle or marks many
            // non-Latin fonts map first.
            var mapped = [UInt32](repeating: 0, count: 256)
            let n = Int(ctext_mapped(face.face, &mapped, Int32(mapped.count)))
            guard n > 0 else { throw error }
            let letters = mapped.prefix(n).filter { Unicode.Scalar($0).map { $0.properties.isAlphabetic && $0.properties.generalCategory != .nonspacingMark && $0.properties.generalCategory != .spacingMark } ?? false }
            output = try draw(Array((letters.count >= 2 ? letters : Array(mapped.prefix(n))).prefix(2)))
        }
        return (width, height)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        output.drain(sink)
    }
}
