import Testing
import ThumbcacheImaging
@testable import ThumbcacheWorker

/// The worker protocol's binary documents: every field comes back, and bytes that are not a
/// document (cut, padded, changed) are refused, never trusted.
struct WorkerCodingTests {
    static var fullInfo: ImageInfo {
        var exif = EXIFData()
        exif.make = "Canon"
        exif.orientation = 6
        var media = MediaMetadata()
        media.title = "A title"
        media.durationSeconds = 12.5
        media.pageCount = 3
        var info = ImageInfo(format: .jpeg, pixelWidth: 4000, pixelHeight: 3000, orientation: .right, hasAlpha: true, exif: exif,
                             bitsPerSample: 16, colorSpace: "CMYK", frameCount: 7)
        info.media = media
        return info
    }

    static var fullRequest: WorkerRequest {
        var request = WorkerRequest(kind: .text, name: "/tmp/ä b.txt", options: ThumbnailOptions(maxWidth: 300, maxHeight: 200))
        request.fallback = "text"
        request.textLimit = 65536
        return request
    }

    static var replies: [WorkerReply] {
        [WorkerReply(hello: .init(version: WorkerProtocol.version, layers: ["seccomp", "landlock"], error: "no user namespaces")),
         WorkerReply(image: .init(width: 256, height: 192, hasAlpha: false), info: fullInfo),
         WorkerReply(info: ImageInfo(format: .png, pixelWidth: 1, pixelHeight: 1, orientation: .up, hasAlpha: false)),
         WorkerReply(error: ImagingError(path: "/x.png", reason: .corrupt("bad CRC"))),
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

    /// The coding names each field: a field added to these types must be added to it too.
    @Test func theCodingKnowsEveryField() {
        #expect(Mirror(reflecting: Self.fullRequest).children.count == 5)
        #expect(Mirror(reflecting: WorkerReply()).children.count == 5)
        #expect(Mirror(reflecting: Self.fullInfo).children.count == 10)
        #expect(Mirror(reflecting: WorkerReply.Image(width: 1, height: 1, hasAlpha: false)).children.count == 3)
    }

    @Test func bytesThatAreNotADocumentAreRefused() throws {
        let reply = try WorkerCoding.encode(Self.replies[1])
        for cut in [0, 1, reply.count / 2, reply.count - 1] {
            #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeReply(Array(reply.prefix(cut))) }
        }
        #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeReply(reply + [0]) }
        // A flag byte that is neither 0 nor 1.
        #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeReply([7] + reply.dropFirst()) }
        // A length far past the end.
        #expect(throws: WorkerCoding.Malformed.self) { try WorkerCoding.decodeRequest([0, 0xff, 0xff, 0xff, 0x7f]) }
        // Every single-byte change either reads as some document or is refused: never a crash.
        let request = try WorkerCoding.encode(Self.fullRequest)
        for i in request.indices {
            var changed = request
            changed[i] ^= 0x5a
            _ = try? WorkerCoding.decodeRequest(changed)
        }
    }
}
