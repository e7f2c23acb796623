#if canImport(Glibc)
import Glibc
#endif
import CThumbcacheVideo
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// A video or an audio file through FFmpeg (Docs/MEDIA.md). A video gives one representative
/// frame: key frames only, at 10–60 % of the duration, nearly black or flat frames passed over,
/// turned by the stream's rotation, converted a band of rows at a time for our own downscaler.
/// That frame is its first page; pages 2 to ``keyFramePages`` are the key frames at 10, 20 … 90 %
/// of the duration (a preview's few key frames, as KDE's sequence index asks).
/// An audio file gives its embedded cover through the PNG/JPEG path, read in place; one without a
/// cover has nothing to show (its header is 0 × 0) but still its tags for the index.
final class MediaSource: RowSource {
    private let path: String
    private let video: OpaquePointer
    let header: RowSourceHeader
    private let cover: (any RowSource)?
    private let stored: (width: Int, height: Int)

    /// Rows converted per call: the frame stays in FFmpeg's planes, RGBA exists for a band only.
    static let band = 16
    /// A video's pages: the representative frame, then nine key frames a tenth of the duration apart.
    static let keyFramePages = 10
    /// The page to draw, 0 the representative frame.
    private let page: Int

    init(descriptor: Int32, name: String, page: Int = 0) throws(ImagingError) {
        path = name
        self.page = page
        var info = cvideo_info()
        let v = try opened(name) { cvideo_open(descriptor, &info, $0, $1) }
        video = v
        let media = Self.metadata(v, info)
        stored = (Int(info.display_width), Int(info.height))
        // Only a video with a known duration has pages past the first; a recording has its cover.
        let pages = info.has_video != 0 && info.duration > 0 && info.duration.isFinite ? Self.keyFramePages : 1
        guard page < pages else {
            cvideo_close(v)
            throw ImagingError(path: name, reason: .noSuchPage(page: page + 1, pages: pages))
        }
        if info.has_video != 0 {
            cover = nil
            // The decoded frame is held whole (FFmpeg's planes): about 1.5 bytes a pixel in 4:2:0.
            header = RowSourceHeader(
                width: stored.width, height: stored.height, hasAlpha: false, buffered: true,
                bufferedBytes: Int(info.width) * Int(info.height) * 3 / 2, orientation: Self.orientation(info),
                bitsPerSample: info.bits_per_sample > 0 ? Int(info.bits_per_sample) : nil, colorSpace: "YCbCr", media: media)
        } else if let bytes = info.cover, info.cover_length > 0 {
            do {
                let inner = try ImageDecoders.picture(memory: UnsafeRawBufferPointer(start: bytes, count: info.cover_length), name: name + " (cover)")
                cover = inner
                var h = inner.header
                h.media = media
                header = h
            } catch {
                cvideo_close(v)
                throw error
            }
        } else {
            cover = nil
            header = RowSourceHeader(width: 0, height: 0, hasAlpha: false, media: media)
        }
    }

    deinit { cvideo_close(video) }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        if let cover { return try cover.start(shrink: shrink, fast: fast) }
        var message = [CChar](repeating: 0, count: 256)
        let status = page == 0 ? cvideo_decode(video, &message, message.count)
            : cvideo_decode_at(video, Double(page) / Double(Self.keyFramePages), &message, message.count)
        guard status == 0 else { throw ImagingError(path: path, reason: .corrupt(cText(message))) }
        return stored
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        if let cover { return try cover.readRows(sink) }
        let stride = stored.width * 4
        var rows = [UInt8](repeating: 0, count: stride * Self.band)
        var message = [CChar](repeating: 0, count: 256)
        var y = 0
        while y < stored.height {
            let count = min(Self.band, stored.height - y)
            let status = rows.withUnsafeMutableBufferPointer { cvideo_rows(video, Int32(y), Int32(count), $0.baseAddress, stride, &message, message.count) }
            guard status == 0 else { throw ImagingError(path: path, reason: .corrupt(cText(message))) }
            rows.withUnsafeBufferPointer { p in
                for i in 0..<count { sink(p.baseAddress! + i * stride) }
            }
            y += count
        }
    }

    /// The stream's display matrix as an orientation; nil (EXIF's, which videos lack) when upright.
    static func orientation(_ info: cvideo_info) -> Orientation? {
        switch (info.rotation, info.flipped != 0) {
        case (90, _): .right
        case (180, false): .down
        case (180, true): .downMirrored
        case (270, _): .left
        case (_, true): .upMirrored
        default: nil
        }
    }

    static func metadata(_ v: OpaquePointer, _ info: cvideo_info) -> MediaMetadata {
        var m = MediaMetadata()
        func tag(_ key: String) -> String? {
            guard let p = cvideo_tag(v, key) else { return nil }
            let s = String(decoding: UnsafeRawBufferPointer(start: p, count: strlen(p)), as: UTF8.self).trimmingWhitespace
            return s.isEmpty ? nil : s
        }
        m.title = tag("title")
        if let artist = tag("artist") ?? tag("album_artist") ?? tag("author") { m.authors = [artist] }
        m.album = tag("album")
        m.genre = tag("genre")
        m.contentIdentifier = tag("com.apple.quicktime.content.identifier")
        m.recordingYear = tag("date").flatMap { Int($0.prefix(4)) }.flatMap { (1000...9999).contains($0) ? $0 : nil }
        m.trackNumber = tag("track").flatMap { Int($0.split(separator: "/").first ?? "") }.flatMap { $0 > 0 ? $0 : nil }
        if info.duration > 0, info.duration.isFinite { m.durationSeconds = info.duration }
        let codecs = [cString(tuple: info.video_codec), cString(tuple: info.audio_codec)].compactMap { $0 }.map(Self.codecName)
        if !codecs.isEmpty { m.codecs = codecs }
        if info.video_bit_rate > 0 {
            m.videoBitRate = Double(info.video_bit_rate)
        } else if info.has_video != 0, info.bit_rate > 0 {
            m.videoBitRate = Double(max(0, info.bit_rate - info.audio_bit_rate))
        }
        if info.audio_bit_rate > 0 {
            m.audioBitRate = Double(info.audio_bit_rate)
        } else if info.has_video == 0, info.bit_rate > 0, info.audio_channels > 0 {
            m.audioBitRate = Double(info.bit_rate)
        }
        if info.audio_channels > 0 { m.audioChannelCount = Int(info.audio_channels) }
        if info.audio_sample_rate > 0 { m.audioSampleRate = Double(info.audio_sample_rate) }
        return m
    }

    /// FFmpeg's codec name as people write it ("h264" → "H.264").
    static func codecName(_ name: String) -> String {
        let known = ["h264": "H.264", "hevc": "HEVC", "vp8": "VP8", "vp9": "VP9", "av1": "AV1", "mpeg4": "MPEG-4 Part 2",
                     "mpeg2video": "MPEG-2", "mpeg1video": "MPEG-1", "theora": "Theora", "mjpeg": "Motion JPEG", "prores": "ProRes",
                     "aac": "AAC", "mp3": "MP3", "mp2": "MP2", "opus": "Opus", "vorbis": "Vorbis", "flac": "FLAC", "alac": "ALAC",
                     "ac3": "AC-3", "eac3": "E-AC-3", "dts": "DTS", "truehd": "TrueHD"]
        if let name = known[name] { return name }
        if name.hasPrefix("pcm_") { return "PCM" }
        return name.uppercased()
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace || c == "\0" { s.removeFirst() }
        while let c = s.last, c.isWhitespace || c == "\0" { s.removeLast() }
        return String(s)
    }
}
