import ThumbcacheImaging

/// Generic icons per type family: a page with a coloured band, drawn once per family and size.
enum Icons {
    enum Family: String, CaseIterable {
        case image, text, pdf, document, audio, movie, archive, folder, data

        var color: (UInt8, UInt8, UInt8) {
            switch self {
            case .image: (52, 120, 246)
            case .text: (120, 120, 128)
            case .pdf: (214, 48, 49)
            case .document: (43, 87, 154)
            case .audio: (245, 130, 32)
            case .movie: (142, 68, 173)
            case .archive: (150, 111, 51)
            case .folder: (90, 170, 230)
            case .data: (70, 70, 80)
            }
        }
    }

    static func family(of type: ContentType, in types: ContentTypeRegistry) -> Family {
        if types.conforms(type, to: .folder) { return .folder }
        if types.conforms(type, to: .image) { return .image }
        if types.conforms(type, to: .pdf) { return .pdf }
        if types.conforms(type, to: .text) { return .text }
        if types.conforms(type, to: .audio) { return .audio }
        if types.conforms(type, to: .movie) { return .movie }
        if types.conforms(type, to: .compositeContent) { return .document }
        if types.conforms(type, to: .archive) { return .archive }
        return .data
    }

    /// The icon of `family` in a `side`-pixel square box (pages are 3:4, centred).
    static func draw(_ family: Family, side: Int) -> RGBAImage {
        let side = max(8, side)
        var canvas = RGBACanvas(width: side * 3 / 4, height: side)
        let w = canvas.width, h = canvas.height
        let border = max(1, side / 32)
        let (r, g, b) = family.color
        canvas.fill(x: 0, y: 0, width: w, height: h, red: 200, green: 200, blue: 205)
        canvas.fill(x: border, y: border, width: w - 2 * border, height: h - 2 * border, red: 250, green: 250, blue: 252)
        canvas.fill(x: border, y: h * 5 / 8, width: w - 2 * border, height: h / 4, red: r, green: g, blue: b)
        // A folded corner.
        let fold = w / 4
        for i in 0..<fold {
            canvas.fill(x: w - fold + i, y: 0, width: fold - i, height: 1, red: 0, green: 0, blue: 0, alpha: 0)
            canvas.fill(x: w - fold, y: i, width: i + 1, height: 1, red: 215, green: 215, blue: 222)
        }
        return canvas.image
    }
}
