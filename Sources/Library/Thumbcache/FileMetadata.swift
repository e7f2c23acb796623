import CThumbcacheFileInfo
import Glibc
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheStore
import ThumbcacheSync
import ThumbcacheWorker

/// The index item of a file: name, size, dates and type for every file; pixel size and EXIF
/// for images; tags and comment from extended attributes (as KDE's Dolphin writes them).
package enum FileMetadata {
    /// Tags, comma-separated (`user.xdg.tags`).
    package static let tagsAttribute = "user.xdg.tags"
    /// A free-text comment (`user.xdg.comment`), indexed as kMDItemComment.
    package static let commentAttribute = "user.xdg.comment"

    package static func item(path: String, snapshot: FileSnapshot, content: ContentHash?, type: ContentType,
                            types: ContentTypeRegistry, imageFormat: ImageFormat?, decoding: any ImageDecoding,
                            decoded: ImageInfo? = nil, provisional: Bool = false) -> FileItem {
        var a: [String: AttributeValue] = [:]
        a[MDItem.fsSize] = .number(Double(snapshot.size))
        a[MDItem.contentType] = .string(type.identifier)
        a[MDItem.contentTypeTree] = .strings(types.tree(of: type).map(\.identifier))
        a[MDItem.contentModificationDate] = .date(Double(snapshot.modificationTime) / 1e9)
        var born: Int64 = 0
        if cfi_birthtime(path, &born) == 0 { a[MDItem.contentCreationDate] = .date(Double(born) / 1e9) }
        // Text has nothing to index but its type: no worker is asked.
        let kind = imageFormat.flatMap { FormatCatalogue.declaration(of: $0)?.kind }
        var provisional = provisional
        if let imageFormat, kind != .text, let info = decoded ?? header(path, imageFormat, decoding, provisional: &provisional) {
            // Pixels only for what is a picture: an image, a video's frame as displayed (not an
            // audio file's cover, a page's points or a font's sample).
            if info.pixelWidth > 0, info.pixelHeight > 0, kind == nil || kind == .image || kind == .movie {
                a[MDItem.pixelWidth] = .number(Double(info.pixelWidth))
                a[MDItem.pixelHeight] = .number(Double(info.pixelHeight))
                a[MDItem.orientation] = .number(Double(info.orientation.rawValue))
                a[MDItem.hasAlphaChannel] = .number(info.hasAlpha ? 1 : 0)
            }
            if let media = info.media { add(media, to: &a) }
            if let bits = info.bitsPerSample { a[MDItem.bitsPerSample] = .number(Double(bits)) }
            if let space = info.colorSpace { a[MDItem.colorSpace] = .string(space) }
            if let frames = info.frameCount, frames > 1 { a[MDItem.frameCount] = .number(Double(frames)) }
            if let exif = info.exif { add(exif, to: &a) }
        }
        if let tags = extendedAttribute(path, tagsAttribute) {
            let list = FileTags.parse(tags)
            if !list.isEmpty { a[MDItem.userTags] = .strings(list) }
        }
        if let comment = extendedAttribute(path, commentAttribute), !comment.isEmpty { a[MDItem.comment] = .string(comment) }
        let state = IndexedFileState(snapshot)
        return FileItem(path: path, state: provisional ? state.provisional : state, contentHash: content?.bytes, attributes: a)
    }

    /// The file's header read by its decoder; nil when it cannot be, and `provisional` set when
    /// that was for a reason of the moment (its worker killed), so the next warm reads it again.
    private static func header(_ path: String, _ format: ImageFormat, _ decoding: any ImageDecoding, provisional: inout Bool) -> ImageInfo? {
        do {
            return try decoding.info(ofFileAt: path, format: format)
        } catch {
            if WorkerFailure.wasKilled(error) { provisional = true }
            return nil
        }
    }

    /// `s` without surrounding whitespace and NULs (fixed-size fields pad with them); nil if nothing is left.
    static func text(_ s: String?) -> String? {
        guard let t = s?.trimming({ $0.isWhitespace || $0 == "\0" }), !t.isEmpty else { return nil }
        return t
    }

    static func add(_ m: MediaMetadata, to a: inout [String: AttributeValue]) {
        func number(_ key: String, _ v: Double?) {
            if let v, v.isFinite, v > 0 { a[key] = .number(v) }
        }
        if let title = text(m.title) { a[MDItem.title] = .string(title) }
        if let authors = m.authors?.compactMap(text), !authors.isEmpty { a[MDItem.authors] = .strings(authors) }
        if let creator = text(m.creator) { a[MDItem.creator] = .string(creator) }
        if let album = text(m.album) { a[MDItem.album] = .string(album) }
        if let genre = text(m.genre) { a[MDItem.musicalGenre] = .string(genre) }
        if let codecs = m.codecs, !codecs.isEmpty { a[MDItem.codecs] = .strings(codecs) }
        if let fonts = m.fonts?.compactMap(text), !fonts.isEmpty { a[MDItem.fonts] = .strings(fonts) }
        if let id = text(m.contentIdentifier) { a[MDItem.livePhotoContentIdentifier] = .string(id) }
        number(MDItem.recordingYear, m.recordingYear.map(Double.init))
        number(MDItem.audioTrackNumber, m.trackNumber.map(Double.init))
        number(MDItem.durationSeconds, m.durationSeconds)
        number(MDItem.videoBitRate, m.videoBitRate)
        number(MDItem.audioBitRate, m.audioBitRate)
        number(MDItem.audioChannelCount, m.audioChannelCount.map(Double.init))
        number(MDItem.audioSampleRate, m.audioSampleRate)
        number(MDItem.numberOfPages, m.pageCount.map(Double.init))
        number(MDItem.pageWidth, m.pageWidth)
        number(MDItem.pageHeight, m.pageHeight)
        if let motion = m.motionPhoto {
            a[MDItem.isMotionPhoto] = .number(1)
            number(MDItem.motionPhotoVideoDurationSeconds, motion.videoDurationSeconds)
            // 0 is a real time (the movie's first frame): kept, unlike the counts above.
            if let t = motion.presentationSeconds, t.isFinite, t >= 0 { a[MDItem.motionPhotoPresentationSeconds] = .number(t) }
        }
    }

    static func add(_ exif: EXIFData, to a: inout [String: AttributeValue]) {
        if let make = text(exif.make) { a[MDItem.acquisitionMake] = .string(make) }
        if let id = text(exif.contentIdentifier) { a[MDItem.livePhotoContentIdentifier] = .string(id) }
        if let model = text(exif.model) { a[MDItem.acquisitionModel] = .string(model) }
        if let lens = text(exif.lensModel) { a[MDItem.lensModel] = .string(lens) }
        if let artist = text(exif.artist) { a[MDItem.authors] = .strings([artist]) }
        if let description = text(exif.imageDescription) { a[MDItem.description] = .string(description) }
        if let v = exif.exposureTime, v.isFinite, v > 0 { a[MDItem.exposureTimeSeconds] = .number(v) }
        if let v = exif.fNumber, v.isFinite, v > 0 { a[MDItem.fNumber] = .number(v) }
        if let v = exif.isoSpeed, v > 0 { a[MDItem.isoSpeed] = .number(Double(v)) }
        if let v = exif.focalLength, v.isFinite, v > 0 { a[MDItem.focalLength] = .number(v) }
        if let v = exif.latitude, v.isFinite, abs(v) <= 90 { a[MDItem.latitude] = .number(v) }
        if let v = exif.longitude, v.isFinite, abs(v) <= 180 { a[MDItem.longitude] = .number(v) }
        if let v = exif.altitude, v.isFinite { a[MDItem.altitude] = .number(v) }
        if let taken = exif.dateTimeOriginal.flatMap({ captureDate($0, offset: exif.offsetTimeOriginal) }) {
            a[MDItem.contentCreationDate] = .date(taken)
        }
    }

    /// Seconds since 1970 for EXIF's "YYYY:MM:DD HH:MM:SS", in its recorded offset or else local time.
    static func captureDate(_ text: String, offset: String?) -> Double? {
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == " " }).compactMap { Int($0) }
        guard parts.count >= 6, parts[0] > 1800, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        if let offset, offset.count >= 6, let h = Int(offset.dropFirst().prefix(2)), let m = Int(offset.suffix(2)),
           case let east = (offset.hasPrefix("-") ? -1 : 1) * (h * 3600 + m * 60), abs(east) <= 18 * 3600 {
            return LocalTime.seconds(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4],
                                     second: Double(parts[5]), offset: east)
        }
        // Local time by the C library ($TZ, /etc/localtime): Foundation's `TimeZone.current` is GMT without ICU.
        return LocalTime.seconds(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4], second: Double(parts[5]))
    }

    /// A `user.*` extended attribute as UTF-8 text; nil if absent or unreadable.
    static func extendedAttribute(_ path: String, _ name: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = cfi_getxattr(path, name, &buffer, buffer.count)
        if n < 0 && errno == ERANGE {
            let size = cfi_getxattr(path, name, nil, 0)
            guard size > 0, size <= 65536 else { return nil }
            buffer = [UInt8](repeating: 0, count: size)
            let m = cfi_getxattr(path, name, &buffer, buffer.count)
            guard m >= 0 else { return nil }
            return String(decoding: buffer[0..<m], as: UTF8.self)
        }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }
}

extension IndexedFileState {
    /// The state the index keeps of a file, from its stat.
    package init(_ s: FileSnapshot) {
        self.init(size: s.size, modificationTime: s.modificationTime, changeTime: s.changeTime, inode: s.inode, device: s.device)
    }
}
