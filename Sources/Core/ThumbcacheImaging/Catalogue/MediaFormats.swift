/// How video and audio containers are told apart (FFmpeg decodes them in the media worker: a
/// representative frame, or the cover an audio file embeds; Docs/MEDIA.md).
enum MediaFormats {
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
    package static let mpeg4 = ImageFormat(rawValue: "mp4")
    package static let quickTime = ImageFormat(rawValue: "mov")
    package static let threeGPP = ImageFormat(rawValue: "3gp")
    package static let matroska = ImageFormat(rawValue: "mkv")
    package static let webM = ImageFormat(rawValue: "webm")
    package static let avi = ImageFormat(rawValue: "avi")
    package static let mpeg = ImageFormat(rawValue: "mpeg")
    package static let mpegTS = ImageFormat(rawValue: "mpegts")
    package static let asf = ImageFormat(rawValue: "asf")
    package static let flashVideo = ImageFormat(rawValue: "flv")
    package static let oggVideo = ImageFormat(rawValue: "ogv")
    package static let mp3 = ImageFormat(rawValue: "mp3")
    package static let mpeg4Audio = ImageFormat(rawValue: "m4a")
    package static let flac = ImageFormat(rawValue: "flac")
    package static let wave = ImageFormat(rawValue: "wav")
    package static let aiff = ImageFormat(rawValue: "aiff")
    package static let aac = ImageFormat(rawValue: "aac")
    package static let oggVorbis = ImageFormat(rawValue: "ogg")
    package static let opus = ImageFormat(rawValue: "opus")
}

/// The video and audio formats of the catalogue (``FormatCatalogue/movies``, ``FormatCatalogue/audio``).
extension FormatDeclaration {
    package static let mpeg4 = FormatDeclaration(
        .mpeg4, type: "public.mpeg-4", name: "MPEG-4 movie", mimeType: "video/mp4", extensions: ["mp4", "m4v"],
        magic: MediaFormats.ftyp(["isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "M4VH", "M4VP",
                                  "MSNV", "mmp4", "f4v ", "XAVC", "av01"]), conformsTo: [.movie], kind: .movie)
    /// QuickTime: the `qt` brand, or an old movie without `ftyp` that starts with its atoms.
    package static let quickTime = FormatDeclaration(
        .quickTime, type: "com.apple.quicktime-movie", name: "QuickTime movie", mimeType: "video/quicktime", extensions: ["mov", "qt"],
        magic: MediaFormats.ftyp(["qt  "]) + ["moov", "mdat", "wide"].map { Magic($0, at: 4) }, conformsTo: [.movie], kind: .movie)
    package static let threeGPP = FormatDeclaration(
        .threeGPP, type: "public.3gpp", name: "3GPP movie", mimeType: "video/3gpp", extensions: ["3gp", "3g2"],
        magic: MediaFormats.ftyp(["3gp4", "3gp5", "3gp6", "3ge6", "3gg6", "3g2a", "3g2b", "3g2c"]), conformsTo: [.movie], kind: .movie)
    package static let matroska = FormatDeclaration(
        .matroska, type: "org.matroska.mkv", name: "Matroska video", mimeType: "video/x-matroska", extensions: ["mkv", "mka", "mk3d"],
        sniffer: Sniffer(name: "matroska-doctype", span: 64) { MediaFormats.ebml($0, docType: "matroska") },
        conformsTo: [.movie], kind: .movie)
    package static let webM = FormatDeclaration(
        .webM, type: "org.webmproject.webm", name: "WebM video", mimeType: "video/webm", extensions: ["webm"],
        sniffer: Sniffer(name: "webm-doctype", span: 64) { MediaFormats.ebml($0, docType: "webm") }, conformsTo: [.movie], kind: .movie)
    package static let avi = FormatDeclaration(
        .avi, type: "public.avi", name: "AVI video", mimeType: "video/x-msvideo", extensions: ["avi"], magic: [Magic("RIFF").and("AVI ", at: 8)],
        conformsTo: [.movie], kind: .movie)
    /// MPEG program streams: a pack header.
    package static let mpeg = FormatDeclaration(
        .mpeg, type: "public.mpeg", name: "MPEG video", mimeType: "video/mpeg", extensions: ["mpg", "mpeg", "vob", "mpe"],
        magic: [Magic([0x00, 0x00, 0x01, 0xBA])], conformsTo: [.movie], kind: .movie)
    /// MPEG transport streams: a sync byte every 188 bytes (or every 192, after a time code, in M2TS).
    package static let mpegTS = FormatDeclaration(
        .mpegTS, type: "public.mpeg-2-transport-stream", name: "MPEG transport stream",
        mimeType: "video/mp2t", extensions: ["ts", "m2ts", "mts"],
        magic: [Magic([0x47]).and([0x47], at: 188).and([0x47], at: 376).and([0x47], at: 564),
                Magic([0x47], at: 4).and([0x47], at: 196).and([0x47], at: 388).and([0x47], at: 580)], conformsTo: [.movie], kind: .movie)
    package static let asf = FormatDeclaration(
        .asf, type: "com.microsoft.windows-media-wmv", name: "Windows Media video", mimeType: "video/x-ms-wmv", extensions: ["wmv", "asf"],
        magic: [Magic([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C])],
        conformsTo: [.movie], kind: .movie)
    package static let flashVideo = FormatDeclaration(
        .flashVideo, type: "com.adobe.flash.video", name: "Flash video", mimeType: "video/x-flv", extensions: ["flv"],
        magic: [Magic([0x46, 0x4C, 0x56, 0x01])], conformsTo: [.movie], kind: .movie)
    /// Ogg is told by the codec of its first page: Theora video, Vorbis or Opus audio.
    package static let oggVideo = FormatDeclaration(
        .oggVideo, type: "org.xiph.ogv", name: "Ogg video", mimeType: "video/ogg", extensions: ["ogv"],
        magic: [Magic("OggS").and([0x80] + Array("theora".utf8), at: 28)], conformsTo: [.movie], kind: .movie)

    package static let mp3 = FormatDeclaration(
        .mp3, type: "public.mp3", name: "MP3 audio", mimeType: "audio/mpeg", extensions: ["mp3"],
        magic: [Magic("ID3")], sniffer: Sniffer(name: "mpeg-audio-frame", span: 4, needsExtension: true, test: MediaFormats.mpegAudioFrame),
        conformsTo: [.audio], kind: .audio)
    package static let mpeg4Audio = FormatDeclaration(
        .mpeg4Audio, type: "public.mpeg-4-audio", name: "MPEG-4 audio", mimeType: "audio/mp4", extensions: ["m4a", "m4b", "m4p"],
        magic: MediaFormats.ftyp(["M4A ", "M4B ", "M4P "]), conformsTo: [.audio], kind: .audio)
    package static let flac = FormatDeclaration(
        .flac, type: "org.xiph.flac", name: "FLAC audio", mimeType: "audio/flac", extensions: ["flac"], magic: [Magic("fLaC")],
        conformsTo: [.audio], kind: .audio)
    package static let wave = FormatDeclaration(
        .wave, type: "com.microsoft.waveform-audio", name: "WAVE audio", mimeType: "audio/x-wav", extensions: ["wav"],
        magic: [Magic("RIFF").and("WAVE", at: 8)], conformsTo: [.audio], kind: .audio)
    package static let aiff = FormatDeclaration(
        .aiff, type: "public.aiff-audio", name: "AIFF audio", mimeType: "audio/x-aiff", extensions: ["aif", "aiff", "aifc"],
        magic: [Magic("FORM").and("AIFF", at: 8), Magic("FORM").and("AIFC", at: 8)], conformsTo: [.audio], kind: .audio)
    package static let aac = FormatDeclaration(
        .aac, type: "public.aac-audio", name: "AAC audio", mimeType: "audio/aac", extensions: ["aac", "adts"],
        sniffer: Sniffer(name: "adts-frame", span: 7, needsExtension: true, test: MediaFormats.adtsFrame),
        conformsTo: [.audio], kind: .audio)
    package static let oggVorbis = FormatDeclaration(
        .oggVorbis, type: "org.xiph.ogg-vorbis", name: "Ogg Vorbis audio", mimeType: "audio/x-vorbis+ogg", extensions: ["ogg", "oga"],
        magic: [Magic("OggS").and([0x01] + Array("vorbis".utf8), at: 28), Magic("OggS").and([0x7F] + Array("FLAC".utf8), at: 28)],
        conformsTo: [.audio], kind: .audio)
    package static let opus = FormatDeclaration(
        .opus, type: "org.xiph.opus", name: "Opus audio", mimeType: "audio/x-opus+ogg", extensions: ["opus"],
        magic: [Magic("OggS").and("OpusHead", at: 28)], conformsTo: [.audio], kind: .audio)

}
