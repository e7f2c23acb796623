/// Formats that are not images but render to one in the worker: video and audio containers
/// (FFmpeg: a representative frame, or the cover an audio file embeds), PDF (poppler: the
/// first page), text (its first lines on a page) and fonts (a sample in the font). They join the same catalogue so detection, routing, the worker and the planner
/// treat them as any decoded format (Docs/MEDIA.md).
public enum MediaFormats {
    /// What a catalogued format's files are, for their place in the type tree.
    public enum Family: Sendable {
        case movie, audio, document, text, font
    }

    /// Video containers: `public.movie` and its kinds.
    public static let movies: [ImageFormatSignature] = [.mpeg4, .quickTime, .threeGPP, .matroska, .webM, .avi, .mpeg, .mpegTS,
                                                        .asf, .flashVideo, .oggVideo]
    /// Audio files: `public.audio` and its kinds.
    public static let audio: [ImageFormatSignature] = [.mp3, .mpeg4Audio, .flac, .wave, .aiff, .aac, .oggVorbis, .opus]
    /// Documents: PDF rendered page-first, and those that carry their own picture.
    public static let documents: [ImageFormatSignature] = [.pdf] + DocumentFormats.all

    /// Text of any kind, drawn as a page of its first lines (FreeType, a monospaced font).
    public static let text: [ImageFormatSignature] = [.plainText]
    /// Font files, drawn as a sample in the font (FreeType).
    public static let fonts: [ImageFormatSignature] = [.trueType, .openType, .fontCollection, .woff, .woff2, .type1]

    /// Every media format, in detection order.
    public static let all = movies + audio + documents + text + fonts

    /// The family of a catalogued media format, nil for an image.
    public static func family(of format: ImageFormat) -> Family? {
        if movies.contains(where: { $0.format == format }) { return .movie }
        if audio.contains(where: { $0.format == format }) { return .audio }
        if documents.contains(where: { $0.format == format }) { return .document }
        if text.contains(where: { $0.format == format }) { return .text }
        if fonts.contains(where: { $0.format == format }) { return .font }
        return nil
    }

    /// ISO-BMFF's `ftyp` box at 4 with one of `brands` as the major brand.
    static func ftyp(_ brands: [String]) -> [Magic] { brands.map { Magic("ftyp", at: 4).and($0, at: 8) } }

    /// An EBML (Matroska) header whose DocType is `docType`: the DocType element (0x4282) lies
    /// within the header's first few dozen bytes, at no fixed offset.
    static func ebml(_ head: UnsafeRawBufferPointer, docType: String) -> Bool {
        guard head.count >= 8, head[0] == 0x1A, head[1] == 0x45, head[2] == 0xDF, head[3] == 0xA3 else { return false }
        let window = head.prefix(64)
        let needle = [0x42, 0x82] as [UInt8]
        var i = window.startIndex
        while i + 3 <= window.endIndex {
            if window[i] == needle[0], window[i + 1] == needle[1] {
                // A one-byte size (0x80 | n), then the DocType string.
                let size = Int(window[i + 2] & 0x7F)
                let start = i + 3
                guard window[i + 2] & 0x80 != 0, start + size <= window.endIndex else { return false }
                return window[start..<(start + size)].elementsEqual(docType.utf8)
            }
            i += 1
        }
        return false
    }

    /// An MPEG audio frame header (the sync word, a valid layer and bitrate index): MP3 files
    /// without an ID3 tag start with one.
    static func mpegAudioFrame(_ h: UnsafeRawBufferPointer) -> Bool {
        guard h.count >= 4, h[0] == 0xFF, h[1] & 0xE0 == 0xE0 else { return false }
        let layer = (h[1] >> 1) & 3, bitrate = h[2] >> 4, rate = (h[2] >> 2) & 3
        return layer != 0 && bitrate != 0 && bitrate != 15 && rate != 3
    }

    /// An ADTS (raw AAC) frame header.
    static func adtsFrame(_ h: UnsafeRawBufferPointer) -> Bool {
        h.count >= 7 && h[0] == 0xFF && h[1] & 0xF6 == 0xF0 && (h[2] >> 2) & 0xF < 13
    }
}

extension ImageFormat {
    public static let mpeg4 = ImageFormat(rawValue: "mp4")
    public static let quickTime = ImageFormat(rawValue: "mov")
    public static let threeGPP = ImageFormat(rawValue: "3gp")
    public static let matroska = ImageFormat(rawValue: "mkv")
    public static let webM = ImageFormat(rawValue: "webm")
    public static let avi = ImageFormat(rawValue: "avi")
    public static let mpeg = ImageFormat(rawValue: "mpeg")
    public static let mpegTS = ImageFormat(rawValue: "mpegts")
    public static let asf = ImageFormat(rawValue: "asf")
    public static let flashVideo = ImageFormat(rawValue: "flv")
    public static let oggVideo = ImageFormat(rawValue: "ogv")
    public static let mp3 = ImageFormat(rawValue: "mp3")
    public static let mpeg4Audio = ImageFormat(rawValue: "m4a")
    public static let flac = ImageFormat(rawValue: "flac")
    public static let wave = ImageFormat(rawValue: "wav")
    public static let aiff = ImageFormat(rawValue: "aiff")
    public static let aac = ImageFormat(rawValue: "aac")
    public static let oggVorbis = ImageFormat(rawValue: "ogg")
    public static let opus = ImageFormat(rawValue: "opus")
    public static let pdf = ImageFormat(rawValue: "pdf")
}

extension ImageFormatSignature {
    public static let mpeg4 = ImageFormatSignature(
        format: .mpeg4, typeIdentifier: "public.mpeg-4", mimeType: "video/mp4", extensions: ["mp4", "m4v"],
        magic: MediaFormats.ftyp(["isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "M4VH", "M4VP",
                                  "MSNV", "mmp4", "f4v ", "XAVC", "av01"]))
    /// QuickTime: the `qt` brand, or an old movie without `ftyp` that starts with its atoms.
    public static let quickTime = ImageFormatSignature(
        format: .quickTime, typeIdentifier: "com.apple.quicktime-movie", mimeType: "video/quicktime", extensions: ["mov", "qt"],
        magic: MediaFormats.ftyp(["qt  "]) + ["moov", "mdat", "wide"].map { Magic($0, at: 4) })
    public static let threeGPP = ImageFormatSignature(
        format: .threeGPP, typeIdentifier: "public.3gpp", mimeType: "video/3gpp", extensions: ["3gp", "3g2"],
        magic: MediaFormats.ftyp(["3gp4", "3gp5", "3gp6", "3ge6", "3gg6", "3g2a", "3g2b", "3g2c"]))
    public static let matroska = ImageFormatSignature(
        format: .matroska, typeIdentifier: "org.matroska.mkv", mimeType: "video/x-matroska", extensions: ["mkv", "mka", "mk3d"], magic: [],
        sniffer: Sniffer(name: "matroska-doctype", span: 64) { MediaFormats.ebml($0, docType: "matroska") })
    public static let webM = ImageFormatSignature(
        format: .webM, typeIdentifier: "org.webmproject.webm", mimeType: "video/webm", extensions: ["webm"], magic: [],
        sniffer: Sniffer(name: "webm-doctype", span: 64) { MediaFormats.ebml($0, docType: "webm") })
    public static let avi = ImageFormatSignature(
        format: .avi, typeIdentifier: "public.avi", mimeType: "video/x-msvideo", extensions: ["avi"], magic: [Magic("RIFF").and("AVI ", at: 8)])
    /// MPEG program streams: a pack header.
    public static let mpeg = ImageFormatSignature(
        format: .mpeg, typeIdentifier: "public.mpeg", mimeType: "video/mpeg", extensions: ["mpg", "mpeg", "vob", "mpe"],
        magic: [Magic([0x00, 0x00, 0x01, 0xBA])])
    /// MPEG transport streams: a sync byte every 188 bytes (or every 192, after a time code, in M2TS).
    public static let mpegTS = ImageFormatSignature(
        format: .mpegTS, typeIdentifier: "public.mpeg-2-transport-stream", mimeType: "video/mp2t", extensions: ["ts", "m2ts", "mts"],
        magic: [Magic([0x47]).and([0x47], at: 188).and([0x47], at: 376).and([0x47], at: 564),
                Magic([0x47], at: 4).and([0x47], at: 196).and([0x47], at: 388).and([0x47], at: 580)])
    public static let asf = ImageFormatSignature(
        format: .asf, typeIdentifier: "com.microsoft.windows-media-wmv", mimeType: "video/x-ms-wmv", extensions: ["wmv", "asf"],
        magic: [Magic([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C])])
    public static let flashVideo = ImageFormatSignature(
        format: .flashVideo, typeIdentifier: "com.adobe.flash.video", mimeType: "video/x-flv", extensions: ["flv"],
        magic: [Magic([0x46, 0x4C, 0x56, 0x01])])
    /// Ogg is told by the codec of its first page: Theora video, Vorbis or Opus audio.
    public static let oggVideo = ImageFormatSignature(
        format: .oggVideo, typeIdentifier: "org.xiph.ogv", mimeType: "video/ogg", extensions: ["ogv"],
        magic: [Magic("OggS").and([0x80] + Array("theora".utf8), at: 28)])

    public static let mp3 = ImageFormatSignature(
        format: .mp3, typeIdentifier: "public.mp3", mimeType: "audio/mpeg", extensions: ["mp3"],
        magic: [Magic("ID3")], sniffer: Sniffer(name: "mpeg-audio-frame", span: 4, needsExtension: true, test: MediaFormats.mpegAudioFrame))
    public static let mpeg4Audio = ImageFormatSignature(
        format: .mpeg4Audio, typeIdentifier: "public.mpeg-4-audio", mimeType: "audio/mp4", extensions: ["m4a", "m4b", "m4p"],
        magic: MediaFormats.ftyp(["M4A ", "M4B ", "M4P "]))
    public static let flac = ImageFormatSignature(
        format: .flac, typeIdentifier: "org.xiph.flac", mimeType: "audio/flac", extensions: ["flac"], magic: [Magic("fLaC")])
    public static let wave = ImageFormatSignature(
        format: .wave, typeIdentifier: "com.microsoft.waveform-audio", mimeType: "audio/x-wav", extensions: ["wav"],
        magic: [Magic("RIFF").and("WAVE", at: 8)])
    public static let aiff = ImageFormatSignature(
        format: .aiff, typeIdentifier: "public.aiff-audio", mimeType: "audio/x-aiff", extensions: ["aif", "aiff", "aifc"],
        magic: [Magic("FORM").and("AIFF", at: 8), Magic("FORM").and("AIFC", at: 8)])
    public static let aac = ImageFormatSignature(
        format: .aac, typeIdentifier: "public.aac-audio", mimeType: "audio/aac", extensions: ["aac", "adts"], magic: [],
        sniffer: Sniffer(name: "adts-frame", span: 7, needsExtension: true, test: MediaFormats.adtsFrame))
    public static let oggVorbis = ImageFormatSignature(
        format: .oggVorbis, typeIdentifier: "org.xiph.ogg-vorbis", mimeType: "audio/x-vorbis+ogg", extensions: ["ogg", "oga"],
        magic: [Magic("OggS").and([0x01] + Array("vorbis".utf8), at: 28), Magic("OggS").and([0x7F] + Array("FLAC".utf8), at: 28)])
    public static let opus = ImageFormatSignature(
        format: .opus, typeIdentifier: "org.xiph.opus", mimeType: "audio/x-opus+ogg", extensions: ["opus"],
        magic: [Magic("OggS").and("OpusHead", at: 28)])

    public static let pdf = ImageFormatSignature(
        format: .pdf, typeIdentifier: "com.adobe.pdf", mimeType: "application/pdf", extensions: ["pdf"], magic: [Magic("%PDF-")])
}
