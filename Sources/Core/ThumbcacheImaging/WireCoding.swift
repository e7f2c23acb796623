import ThumbcacheSync

// The binary form (``WireWriter``) of what a worker's requests and replies carry: the thumbnail's
// options, a photo's EXIF, a document's or a recording's metadata, and an error (the protocol is
// ThumbcacheWorker's WorkerCoding). As JSON through Codable they cost a one-file miss about a
// millisecond where it waits for them, most of it the generic metadata Codable makes at first use.
// Each reader returns nil for bytes that are not what its writer wrote.

extension WireWriter {
    package mutating func optionalInt(_ value: Int?) { optional(value) { $0.int($1) } }
    package mutating func optionalDouble(_ value: Double?) { optional(value) { $0.double($1) } }
    package mutating func optionalString(_ value: String?) { optional(value) { $0.string($1) } }
    package mutating func strings(_ values: [String]) {
        int(values.count)
        for value in values { string(value) }
    }
    package mutating func optionalStrings(_ values: [String]?) { optional(values) { $0.strings($1) } }
}

extension WireReader {
    package mutating func optionalInt() -> Int?? { optional { $0.int() } }
    package mutating func optionalDouble() -> Double?? { optional { $0.double() } }
    package mutating func optionalString() -> String?? { optional { $0.string() } }
    /// Strings as ``WireWriter/strings(_:)`` wrote them; a count the bytes cannot hold is nil.
    package mutating func strings() -> [String]? {
        guard let count = int(), count >= 0, count <= remaining / 4 else { return nil }
        var values: [String] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            guard let value = string() else { return nil }
            values.append(value)
        }
        return values
    }
    package mutating func optionalStrings() -> [String]?? { optional { $0.strings() } }
}

extension ThumbnailOptions {
    package func write(to w: inout WireWriter) {
        w.int(maxWidth)
        w.int(maxHeight)
        w.string(mode.rawValue)
        w.string(kernel.rawValue)
        w.int(limits.maxPixels)
        w.int(limits.maxBufferedPixels)
        w.bool(allowUpscaling)
        w.bool(linearLight)
        w.int(page)
    }

    package init?(reading r: inout WireReader) {
        guard let maxWidth = r.int(), let maxHeight = r.int(), let mode = r.string().flatMap(ResizeMode.init(rawValue:)),
              let kernel = r.string().flatMap(ResamplingKernel.init(rawValue:)), let maxPixels = r.int(), let maxBuffered = r.int(),
              let allowUpscaling = r.bool(), let linearLight = r.bool(), let page = r.int()
        else { return nil }
        self.init(maxWidth: maxWidth, maxHeight: maxHeight, mode: mode, kernel: kernel,
                  limits: DecodeLimits(maxPixels: maxPixels, maxBufferedPixels: maxBuffered), allowUpscaling: allowUpscaling,
                  linearLight: linearLight)
        self.page = page
    }
}

extension EXIFData {
    package func write(to w: inout WireWriter) {
        w.optionalInt(orientation)
        w.optionalString(make)
        w.optionalString(model)
        w.optionalString(artist)
        w.optionalString(imageDescription)
        w.optionalString(dateTimeOriginal)
        w.optionalString(offsetTimeOriginal)
        w.optionalDouble(exposureTime)
        w.optionalDouble(fNumber)
        w.optionalInt(isoSpeed)
        w.optionalDouble(focalLength)
        w.optionalString(lensModel)
        w.optionalDouble(latitude)
        w.optionalDouble(longitude)
        w.optionalDouble(altitude)
        w.optionalInt(pixelWidth)
        w.optionalInt(pixelHeight)
        w.optional(thumbnailRange) { w, range in
            w.int(range.lowerBound)
            w.int(range.upperBound)
        }
        w.optionalString(contentIdentifier)
    }

    package init?(reading r: inout WireReader) {
        self.init()
        guard let orientation = r.optionalInt(), let make = r.optionalString(), let model = r.optionalString(),
              let artist = r.optionalString(), let imageDescription = r.optionalString(), let dateTimeOriginal = r.optionalString(),
              let offsetTimeOriginal = r.optionalString(), let exposureTime = r.optionalDouble(), let fNumber = r.optionalDouble(),
              let isoSpeed = r.optionalInt(), let focalLength = r.optionalDouble(), let lensModel = r.optionalString(),
              let latitude = r.optionalDouble(), let longitude = r.optionalDouble(), let altitude = r.optionalDouble(),
              let pixelWidth = r.optionalInt(), let pixelHeight = r.optionalInt(),
              let thumbnailRange = r.optional({ r -> Range<Int>? in
                  guard let lower = r.int(), let upper = r.int(), lower <= upper else { return nil }
                  return lower..<upper
              }),
              let contentIdentifier = r.optionalString()
        else { return nil }
        (self.orientation, self.make, self.model, self.artist, self.imageDescription) = (orientation, make, model, artist, imageDescription)
        (self.dateTimeOriginal, self.offsetTimeOriginal, self.exposureTime, self.fNumber) = (dateTimeOriginal, offsetTimeOriginal, exposureTime, fNumber)
        (self.isoSpeed, self.focalLength, self.lensModel) = (isoSpeed, focalLength, lensModel)
        (self.latitude, self.longitude, self.altitude) = (latitude, longitude, altitude)
        (self.pixelWidth, self.pixelHeight, self.thumbnailRange, self.contentIdentifier) = (pixelWidth, pixelHeight, thumbnailRange, contentIdentifier)
    }
}

extension MediaMetadata {
    package func write(to w: inout WireWriter) {
        w.optionalString(title)
        w.optionalStrings(authors)
        w.optionalString(creator)
        w.optionalString(album)
        w.optionalString(genre)
        w.optionalInt(recordingYear)
        w.optionalInt(trackNumber)
        w.optionalDouble(durationSeconds)
        w.optionalStrings(codecs)
        w.optionalDouble(videoBitRate)
        w.optionalDouble(audioBitRate)
        w.optionalInt(audioChannelCount)
        w.optionalDouble(audioSampleRate)
        w.optionalInt(pageCount)
        w.optionalDouble(pageWidth)
        w.optionalDouble(pageHeight)
        w.optionalStrings(fonts)
        w.optional(motionPhoto) { w, movie in
            w.int(movie.videoOffset)
            w.int(movie.videoLength)
            w.optionalDouble(movie.presentationSeconds)
            w.optionalDouble(movie.videoDurationSeconds)
            w.int(movie.bytesRead)
        }
        w.optionalString(contentIdentifier)
    }

    package init?(reading r: inout WireReader) {
        self.init()
        guard let title = r.optionalString(), let authors = r.optionalStrings(), let creator = r.optionalString(),
              let album = r.optionalString(), let genre = r.optionalString(), let recordingYear = r.optionalInt(),
              let trackNumber = r.optionalInt(), let durationSeconds = r.optionalDouble(), let codecs = r.optionalStrings(),
              let videoBitRate = r.optionalDouble(), let audioBitRate = r.optionalDouble(), let audioChannelCount = r.optionalInt(),
              let audioSampleRate = r.optionalDouble(), let pageCount = r.optionalInt(), let pageWidth = r.optionalDouble(),
              let pageHeight = r.optionalDouble(), let fonts = r.optionalStrings(),
              let motionPhoto = r.optional({ r -> MotionPhoto? in
                  guard let offset = r.int(), let length = r.int(), let presentation = r.optionalDouble(),
                        let duration = r.optionalDouble(), let bytesRead = r.int()
                  else { return nil }
                  return MotionPhoto(videoOffset: offset, videoLength: length, presentationSeconds: presentation,
                                     videoDurationSeconds: duration, bytesRead: bytesRead)
              }),
              let contentIdentifier = r.optionalString()
        else { return nil }
        (self.title, self.authors, self.creator, self.album, self.genre) = (title, authors, creator, album, genre)
        (self.recordingYear, self.trackNumber, self.durationSeconds, self.codecs) = (recordingYear, trackNumber, durationSeconds, codecs)
        (self.videoBitRate, self.audioBitRate, self.audioChannelCount, self.audioSampleRate) = (videoBitRate, audioBitRate, audioChannelCount, audioSampleRate)
        (self.pageCount, self.pageWidth, self.pageHeight, self.fonts) = (pageCount, pageWidth, pageHeight, fonts)
        (self.motionPhoto, self.contentIdentifier) = (motionPhoto, contentIdentifier)
    }
}

extension ImagingError {
    /// The path, then the reason as a tag byte and its fields.
    package func write(to w: inout WireWriter) {
        w.string(path)
        switch reason {
        case .unreadable(let message): w.uint8(0); w.string(message)
        case .empty: w.uint8(1)
        case .unsupportedFormat: w.uint8(2)
        case .decoderNotInProcess(let format): w.uint8(3); w.string(format)
        case .tooLarge(let width, let height, let limit): w.uint8(4); w.int(Int(width)); w.int(Int(height)); w.int(limit)
        case .corrupt(let message): w.uint8(5); w.string(message)
        case .encodingFailed(let message): w.uint8(6); w.string(message)
        case .noPicture(let what): w.uint8(7); w.string(what)
        case .decodedElsewhere(let family): w.uint8(8); w.string(family)
        case .noTextExtractor(let format): w.uint8(9); w.string(format)
        case .noSuchPage(let page, let pages): w.uint8(10); w.int(page); w.int(pages)
        }
    }

    package init?(reading r: inout WireReader) {
        guard let path = r.string(), let tag = r.uint8() else { return nil }
        let reason: Reason?
        switch tag {
        case 0: reason = r.string().map { .unreadable($0) }
        case 1: reason = .empty
        case 2: reason = .unsupportedFormat
        case 3: reason = r.string().map { .decoderNotInProcess(format: $0) }
        case 4:
            guard let width = r.int().flatMap(UInt32.init(exactly:)), let height = r.int().flatMap(UInt32.init(exactly:)), let limit = r.int()
            else { return nil }
            reason = .tooLarge(width: width, height: height, limit: limit)
        case 5: reason = r.string().map { .corrupt($0) }
        case 6: reason = r.string().map { .encodingFailed($0) }
        case 7: reason = r.string().map { .noPicture($0) }
        case 8: reason = r.string().map { .decodedElsewhere(by: $0) }
        case 9: reason = r.string().map { .noTextExtractor(format: $0) }
        case 10:
            guard let page = r.int(), let pages = r.int() else { return nil }
            reason = .noSuchPage(page: page, pages: pages)
        default: reason = nil
        }
        guard let reason else { return nil }
        self.init(path: path, reason: reason)
    }
}
