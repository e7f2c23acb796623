import Testing
@testable import ThumbcacheImaging
import ThumbcacheSync
@testable import ThumbcacheWorker

/// The worker protocol's binary documents: every field comes back, and bytes that are not a
/// document (cut, padded, changed) are refused, never trusted.
struct WorkerCodingTests {
    /// Every field set, none to its default.
    static var fullEXIF: EXIFData {
        var exif = EXIFData()
        (exif.orientation, exif.make, exif.model, exif.artist, exif.imageDescription) = (6, "Canon", "EOS R5", "Ada", "A lake")
        (exif.dateTimeOriginal, exif.offsetTimeOriginal, exif.exposureTime, exif.fNumber) = ("2024:05:01 10:00:00", "+02:00", 1.0 / 250, 2.8)
        (exif.isoSpeed, exif.focalLength, exif.lensModel) = (400, 35, "RF35mm")
        (exif.latitude, exif.longitude, exif.altitude) = (-33.5, 151.25, .infinity)
        (exif.pixelWidth, exif.pixelHeight, exif.thumbnailRange, exif.contentIdentifier) = (8192, 5464, 1200..<9000, "ABCD-1234")
        return exif
    }

    static var fullMedia: MediaMetadata {
        var media = MediaMetadata()
        (media.title, media.authors, media.creator, media.album, media.genre) = ("A title", ["Ada", "Grace"], "LibreOffice", "Live", "Jazz")
        (media.recordingYear, media.trackNumber, media.durationSeconds, media.codecs) = (1959, 3, 12.5, ["H.264", "AAC"])
        (media.videoBitRate, media.audioBitRate, media.audioChannelCount, media.audioSampleRate) = (4e6, 128e3, 2, 48000)
        (media.pageCount, media.pageWidth, media.pageHeight, media.fonts) = (3, 595.3, 841.9, ["DejaVu Sans", ""])
        media.motionPhoto = MotionPhoto(videoOffset: 100, videoLength: 2000, presentationSeconds: 1.5, videoDurationSeconds: nil, bytesRead: 64)
        media.contentIdentifier = "5D6F-LIVE"
        return media
    }

    static var fullInfo: ImageInfo {
        let exif = fullEXIF
        let media = fullMedia
        var info = ImageInfo(format: .jpeg, pixelWidth: 4000, pixelHeight: 3000, orientation: .right, hasAlpha: true, exif: exif,
                             bitsPerSample: 16, colorSpace: "CMYK", frameCount: 7)
        info.media = media
        return info
    }

    static var fullRequest: WorkerRequest {
        var options = ThumbnailOptions(maxWidth: 300, maxHeight: 200, mode: .fill, kernel: .mitchell,
                                       limits: DecodeLimits(maxPixels: 1 << 20, maxBufferedPixels: 1 << 18), allowUpscaling: true, linearLight: true)
        options.page = 4
        var request = WorkerRequest(kind: .text, name: "/tmp/ä b.txt", options: options)
        request.fallback = "text"
        request.textLimit = 65536
        return request
    }

    static var replies: [WorkerReply] {
        [WorkerReply(hello: .init(version: WorkerProtocol.version, layers: ["seccomp", "landlock"], error: "no user namespaces")),
         WorkerReply(image: .init(width: 256, height: 192, hasAlpha: false), info: fullInfo),
         WorkerReply(info: ImageInfo(format: .png, pixelWidth: 1, pixelHeight: 1, orientation: .up, hasAlpha: false)),
         WorkerReply(error: ImagingError(path: "/x.png", reason: .corrupt("bad CRC"))),
         WorkerReply(image: .init(width: 2, height: 2, hasAlpha: true), error: ImagingError(path: "", reason: .empty), textFormat: "text"),
         WorkerReply(textFormat: "pdf"),
         WorkerReply()]
    }

    @Test func everyFieldOfARequestComesBack() throws {
        for request in [Self.fullRequest, WorkerRequest(kind: .thumbnail, name: "a", options: nil), WorkerRequest(kind: .embeddedThumbnail, name: "")] {
            let back = try WorkerCoding.decodeRequest(WorkerCoding.encode(request))
            #expect(back.kind == request.kind && back.name == request.name && back.options == request.options)
            #expect(back.fallback == request.fallback && back.textLimit == request.textLimit)
        }
    }

    @Test func everyFieldOfAReplyComesBack() throws {
        for reply in Self.replies {
            let back = try WorkerCoding.decodeReply(WorkerCoding.encode(reply))
            #expect(back.image?.width == reply.image?.width && back.image?.height == reply.image?.height && back.image?.hasAlpha == reply.image?.hasAlpha)
            #expect(back.info == reply.info && back.error == reply.error && back.textFormat == reply.textFormat)
            #expect(back.hello?.layers == reply.hello?.layers && back.hello?.error == reply.hello?.error && back.hello?.version == reply.hello?.version)
        }
    }

    /// One of each reason (the coding's switch over them is exhaustive, so a new one fails to
    /// build until it is coded; this says each comes back as it went).
    static let reasons: [ImagingError.Reason] = [
        .unreadable("Permission denied"), .empty, .unsupportedFormat, .decoderNotInProcess(format: "heif"),
        .tooLarge(width: .max, height: 70_000, limit: 1 << 28), .corrupt("Premature end of JPEG file"), .encodingFailed("zlib"),
        .noPicture("an audio file without a cover"), .decodedElsewhere(by: "heavy"), .noTextExtractor(format: "png"),
        .noSuchPage(page: 9, pages: 3),
    ]

    @Test func everyReasonOfAnErrorComesBack() throws {
        for reason in Self.reasons {
            let error = ImagingError(path: "/tmp/ä b.jpg", reason: reason)
            let back = try WorkerCoding.decodeReply(WorkerCoding.encode(WorkerReply(error: error))).error
            #expect(back == error)
        }
        // A tag no reason has, and a width no UInt32 holds, are refused.
        for (tag, width) in [(UInt8(11), 1), (4, Int(UInt32.max) + 1)] {
            var w = WireWriter()
            w.string("/x")
            w.uint8(tag)
            for value in [width, 1, 1] { w.int(value) }
            var reply = WireWriter()
            for _ in 0..<3 { reply.bool(false) }
            reply.optional(w.bytes) { $0.run($1) }
            reply.bool(false)
            #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeReply(reply.bytes) }
        }
    }

    /// The coding names each field: a field added to these types must be added to it too.
    @Test func theCodingKnowsEveryField() {
        #expect(Mirror(reflecting: Self.fullRequest).children.count == 5)
        #expect(Mirror(reflecting: WorkerReply()).children.count == 5)
        #expect(Mirror(reflecting: Self.fullInfo).children.count == 10)
        #expect(Mirror(reflecting: WorkerReply.Image(width: 1, height: 1, hasAlpha: false)).children.count == 3)
        #expect(Mirror(reflecting: WorkerReply.Hello(version: 1, layers: [], error: nil)).children.count == 3)
        #expect(Mirror(reflecting: ThumbnailOptions(maxWidth: 1, maxHeight: 1)).children.count == 8)
        #expect(Mirror(reflecting: DecodeLimits()).children.count == 2)
        #expect(Mirror(reflecting: ImagingError(path: "", reason: .empty)).children.count == 2)
        #expect(Mirror(reflecting: Self.fullEXIF).children.count == 19)
        #expect(Mirror(reflecting: Self.fullMedia).children.count == 19)
        #expect(Mirror(reflecting: Self.fullMedia.motionPhoto!).children.count == 5)
    }

    /// A hello of another protocol version is read as far as its version, whatever follows it:
    /// the parent then says which versions differ rather than that the bytes are malformed.
    @Test func anotherVersionsHelloIsReadToItsVersion() throws {
        var w = WireWriter()
        w.int(WorkerProtocol.version - 1)
        w.string("{\"anything\": true}")
        var reply = WireWriter()
        reply.optional(w.bytes) { $0.run($1) }
        for _ in 0..<4 { reply.bool(false) }
        let hello = try WorkerCoding.decodeReply(reply.bytes).hello
        #expect(hello?.version == WorkerProtocol.version - 1)
    }

    @Test func bytesThatAreNotADocumentAreRefused() throws {
        let reply = WorkerCoding.encode(Self.replies[1])
        #expect(try WorkerCoding.decodeReply(reply).info == Self.fullInfo)
        for cut in [0, 1, reply.count / 2, reply.count - 1] {
            #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeReply(Array(reply.prefix(cut))) }
        }
        #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeReply(reply + [0]) }
        // A flag byte that is neither 0 nor 1.
        #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeReply([7] + reply.dropFirst()) }
        // A length far past the end.
        #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeRequest([0, 0xff, 0xff, 0xff, 0x7f]) }
        // Every single-byte change either reads as some document or is refused: never a crash.
        let request = WorkerCoding.encode(Self.fullRequest)
        for i in request.indices {
            var changed = request
            changed[i] ^= 0x5a
            _ = try? WorkerCoding.decodeRequest(changed)
        }
    }
}
