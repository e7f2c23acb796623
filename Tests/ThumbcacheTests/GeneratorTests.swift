import Foundation
import Testing
import Thumbcache
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheTestSupport

/// A minimal little-endian EXIF block holding an IFD1 JPEG thumbnail.
func exifWithThumbnail(_ jpeg: [UInt8]) -> [UInt8] {
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
    var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(8)
    out += le16(0) + le32(14)  // IFD0: no entries, next IFD at 14
    let thumbOffset = 14 + 2 + 2 * 12 + 4
    out += le16(2) + le16(0x0201) + le16(4) + le32(1) + le32(thumbOffset) + le16(0x0202) + le16(4) + le32(1) + le32(jpeg.count) + le32(0)
    return out + jpeg
}

struct GeneratorFixture {
    let dir = TemporaryDirectory()
    let store: ThumbnailStore
    let generator: ThumbnailGenerator

    init(providers: [any ThumbnailProvider] = [ImageThumbnailProvider()], types: ContentTypeRegistry = ContentTypeRegistry()) throws {
        store = try ThumbnailStore.open(directory: dir.appending("cache"))
        generator = ThumbnailGenerator(store: store, providers: providers, types: types)
    }

    func png(_ name: String, width: Int = 300, height: Int = 200) throws -> String {
        try dir.write(name, ImageEncoder.png(testPhoto(width: width, height: height)))
    }

    func jpegWithEmbeddedThumbnail(_ name: String) throws -> String {
        let small = try ImageEncoder.jpeg(testPhoto(width: 80, height: 60))
        return try dir.write(name, ImageEncoder.jpeg(testPhoto(width: 640, height: 480), exif: exifWithThumbnail(small)))
    }
}

func kinds(_ stream: AsyncThrowingStream<ThumbnailRepresentation, any Error>) async -> (kinds: [RepresentationKind], error: (any Error)?) {
    var seen: [RepresentationKind] = []
    do {
        for try await r in stream { seen.append(r.kind) }
        return (seen, nil)
    } catch {
        return (seen, error)
    }
}

struct GeneratorTests {
    @Test func representationsArriveLowerQualityFirst() async throws {
        let f = try GeneratorFixture()
        let path = try f.jpegWithEmbeddedThumbnail("camera.jpg")
        let (seen, error) = await kinds(f.generator.representations(for: ThumbnailRequest(fileAt: path, size: 128)))
        #expect(error == nil)
        #expect(seen == [.icon, .lowQuality, .thumbnail])
    }

    @Test func aStepWithNothingToShowIsSkipped() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("plain.png")
        let (seen, error) = await kinds(f.generator.representations(for: ThumbnailRequest(fileAt: path, size: 128)))
        #expect(error == nil)
        #expect(seen == [.icon, .thumbnail])
    }

    @Test func aBrokenFileEndsTheSequenceWithAnErrorAndIsRemembered() async throws {
        let f = try GeneratorFixture()
        let jpeg = try ImageEncoder.jpeg(testPhoto(width: 400, height: 300))
        let path = try f.dir.write("broken.jpg", Array(jpeg.prefix(jpeg.count / 2)))
        let (seen, error) = await kinds(f.generator.representations(for: ThumbnailRequest(fileAt: path, size: 128)))
        #expect(seen == [.icon])
        #expect("\(error!)".contains("broken.jpg"))
        let content = try f.store.identify(fileAt: path, hasher: ContentHasher()).content
        #expect(try f.store.failure(content: content, generatorVersion: thumbnailGeneratorVersion) != nil)
        // The best representation falls back to the icon.
        #expect(try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128)).kind == .icon)
    }

    @Test func cancellingARequestEndsIt() async throws {
        let f = try GeneratorFixture()
        let request = ThumbnailRequest(fileAt: try f.png("a.png"), size: 64, representationTypes: .thumbnail)
        f.generator.cancel(request)
        await #expect(throws: CancellationError.self) { try await f.generator.bestRepresentation(for: request) }

        let task = Task { try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: try f.png("b.png"), size: 64, representationTypes: .thumbnail)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func cancellationsAreDroppedWhenTheirRequestsEnd() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("a.png")
        let early = ThumbnailRequest(fileAt: path, size: 64, representationTypes: .thumbnail)
        f.generator.cancel(early)
        await #expect(throws: CancellationError.self) { try await f.generator.bestRepresentation(for: early) }
        #expect(f.generator.pendingCancellations == 0)
        // Requests cancelled after they ended (a UI cancelling cells scrolled away): bounded.
        for _ in 0..<(RequestStates.maxIdleCancellations + 40) {
            let request = ThumbnailRequest(fileAt: path, size: 64)
            _ = try await f.generator.bestRepresentation(for: request)
            f.generator.cancel(request)
        }
        #expect(f.generator.pendingCancellations == RequestStates.maxIdleCancellations)
    }

    @Test func aProgressiveRequestHashesAnUncachedFileOnce() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("new.png", width: 900, height: 600)
        let (seen, error) = await kinds(f.generator.representations(for: ThumbnailRequest(fileAt: path, size: 128)))
        #expect(error == nil && seen == [.icon, .thumbnail])
        #expect(f.generator.filesHashed == 1)
    }

    @Test func aCacheHitIsOneReadTransaction() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("hit.png")
        _ = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128))
        RacyWindow.waitUntilSettled([path])  // past the stat cache's racy window
        _ = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128))  // records the settled entry
        let before = f.store.environment.readTransactionCount
        let hit = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128, representationTypes: .thumbnail))
        #expect(hit.fromCache)
        #expect(f.store.environment.readTransactionCount - before == 1)
    }

    /// A process made for one file writes a hit's access stamp only when the stored one is an
    /// hour old: that commit is a flush, the whole wait of a hit on a spinning disk.
    @Test func aOneFileHitWritesItsAccessStampOncePerResolution() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("stamped.png")
        _ = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128))
        RacyWindow.waitUntilSettled([path])
        _ = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128))
        var keys: [ThumbnailKey] = []
        try f.store.forEachThumbnail { key, _ in keys.append(key); return true }
        let request = ThumbnailRequest(fileAt: path, size: 128, representationTypes: .thumbnail)
        for key in keys { try f.store.apply([.accessed(key, minute: 1)]) }
        #expect(try CacheHit.thumbnail(for: request, in: f.store) != nil)
        let now = currentMinute()
        let stamped = try keys.filter { try f.store.lastAccess(of: $0) ?? 0 >= now }
        #expect(stamped.count == 1, "the hit's thumbnail is stamped now")
        guard let key = stamped.first else { return }
        // Two minutes short of the resolution: a minute that turns during the test changes nothing.
        for (age, written) in [(UInt32(30), false), (CacheHit.accessResolution - 2, false), (CacheHit.accessResolution + 1, true)] {
            try f.store.apply([.accessed(key, minute: now - age)])
            #expect(try CacheHit.thumbnail(for: request, in: f.store) != nil)
            let after = try f.store.lastAccess(of: key)
            #expect(written ? after! >= now : after == now - age, "a stamp \(age) minutes old, now \(String(describing: after)) against \(now)")
        }
    }

    @Test func identicalConcurrentRequestsShareOneGeneration() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("shared.png", width: 1600, height: 1200)
        let results = try await withThrowingTaskGroup(of: ThumbnailRepresentation.self) { group in
            for _ in 0..<8 { group.addTask { try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 256)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 8)
        #expect(Set(results.map(\.data)).count == 1)
        #expect(f.generator.generationCount == 1)
    }

    @Test func thumbnailsAreCachedByContent() async throws {
        let f = try GeneratorFixture()
        let a = try f.png("a.png")
        let b = try f.dir.write("copy-of-a.png", Array(FileManager.default.contents(atPath: a)!))
        let first = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: a, size: 128))
        let second = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: b, size: 128))
        #expect(!first.fromCache && second.fromCache)
        #expect(f.generator.generationCount == 1)
        #expect(first.pixelWidth == 128 && first.pixelHeight == 85)
        #expect(first.contentRect.y == (128 - 85) / 2)
    }

    @Test func smallerSizesComeFromTheLadder() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("ladder.png", width: 2000, height: 1000)
        _ = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 512))
        let small = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128))
        #expect(small.pixelWidth == 128 && small.pixelHeight == 64)
        #expect(f.generator.generationCount == 1)
        // A smaller cached thumbnail is the low-quality step for a larger request.
        let (seen, _) = await kinds(f.generator.representations(for: ThumbnailRequest(fileAt: path, size: 1024)))
        #expect(seen == [.icon, .lowQuality, .thumbnail])
    }

    @Test func appSuppliedThumbnailsAreServed() async throws {
        let f = try GeneratorFixture()
        let path = try f.dir.write("document.png", ImageEncoder.png(testPhoto(width: 50, height: 50)))
        var red = RGBACanvas(width: 100, height: 100)
        red.fill(x: 0, y: 0, width: 100, height: 100, red: 255, green: 0, blue: 0)
        try await f.generator.setThumbnail(red.image, forFileAt: path, spec: ThumbnailSpec(size: 100))
        let got = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 100))
        #expect(got.fromCache)
        #expect(f.generator.generationCount == 0)
        let pixels = try got.image().pixels
        #expect(pixels[0] == 255 && pixels[1] == 0)
    }

    /// A representation decodes whatever encoding its record holds; bytes that do not decode
    /// throw an ``ImagingError`` naming the representation (a JPEG record once threw "no provider").
    @Test func aRepresentationDecodesItsEncoding() async throws {
        let f = try GeneratorFixture()
        let path = try f.png("j.png", width: 64, height: 64)
        let content = try ContentHasher().hash(fileAt: path).hash
        let spec = ThumbnailSpec(size: 64)
        var red = RGBACanvas(width: 64, height: 64)
        red.fill(x: 0, y: 0, width: 64, height: 64, red: 255, green: 0, blue: 0)
        func header(_ encoding: ThumbnailEncoding) -> ThumbnailHeader {
            ThumbnailHeader(encoding: encoding, kind: .thumbnail, hasAlpha: false, pixelWidth: 64, pixelHeight: 64, scale: 1,
                            created: 0, sourceContentType: "public.png")
        }
        try f.store.apply([.thumbnail(spec.key(for: content), header(.jpeg), data: try ImageEncoder.jpeg(red.image))])
        let got = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 64))
        #expect(got.encoding == .jpeg)
        let image = try got.image()
        #expect(image.width == 64 && image.height == 64)
        #expect(image.pixels[0] > 240 && image.pixels[1] < 16)

        try f.store.apply([.thumbnail(spec.key(for: content), header(.jpeg), data: [0xFF, 0xD8, 0xFF])])
        let truncated = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 64))
        let error = #expect(throws: ImagingError.self) { try truncated.image() }
        #expect(error?.path == "(thumbnail representation)")
    }

    @Test func savesPNGAndJPEG() async throws {
        let f = try GeneratorFixture()
        let request = ThumbnailRequest(fileAt: try f.png("s.png"), size: 64)
        try await f.generator.saveBestRepresentation(for: request, to: f.dir.appending("out.png"), contentType: .png)
        try await f.generator.saveBestRepresentation(for: request, to: f.dir.appending("out.jpg"), contentType: .jpeg)
        #expect(try ImageFormat.detect(fileAt: f.dir.appending("out.png")) == .png)
        #expect(try ImageFormat.detect(fileAt: f.dir.appending("out.jpg")) == .jpeg)
    }
}

/// Providers: exact type matching, minimum dimension, and the three reply forms.
struct ProviderTests {
    static let stripes: ContentType = "org.example.stripes"

    static var types: ContentTypeRegistry {
        var t = ContentTypeRegistry()
        t.declare(ContentTypeDeclaration(stripes, conformsTo: [.image], mimeType: "application/x-stripes", extensions: ["stripes"]))
        return t
    }

    /// Draws vertical stripes: red, then green, in halves.
    struct StripesProvider: ThumbnailProvider {
        var reply: String
        var minimumDimension: Int = 0
        var contentTypes: Set<ContentType> { [ProviderTests.stripes] }

        func provideThumbnail(for request: ThumbnailProviderRequest) throws -> ThumbnailReply {
            var canvas = RGBACanvas(width: 40, height: 20)
            canvas.fill(x: 0, y: 0, width: 20, height: 20, red: 255, green: 0, blue: 0)
            canvas.fill(x: 20, y: 0, width: 20, height: 20, red: 0, green: 255, blue: 0)
            switch reply {
            case "pixels": return .pixels(canvas.image)
            case "drawing":
                return .drawing(width: 40, height: 20) { c in
                    c.fill(x: 0, y: 0, width: 20, height: 20, red: 255, green: 0, blue: 0)
                    c.fill(x: 20, y: 0, width: 20, height: 20, red: 0, green: 255, blue: 0)
                }
            default:
                let file = request.path + ".preview.png"
                try Data(ImageEncoder.png(canvas.image)).write(to: URL(fileURLWithPath: file))
                return .imageFile(path: file)
            }
        }
    }

    @Test(arguments: ["pixels", "drawing", "imageFile"])
    func aCustomFormatGetsThumbnailsInEveryReplyForm(reply: String) async throws {
        let f = try GeneratorFixture(providers: [StripesProvider(reply: reply)], types: Self.types)
        let path = try f.dir.write("pattern.stripes", Array("stripes v1".utf8))
        let r = try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 64))
        #expect(r.kind == .thumbnail)
        #expect(r.pixelWidth == 40 && r.pixelHeight == 20)
        let image = try r.image()
        #expect(image.pixels[0] == 255 && image.pixels[1] == 0)  // left: red
        #expect(image.pixels[39 * 4 + 1] == 255 && image.pixels[39 * 4] == 0)  // right: green
    }

    /// A fill request gets a filled, cropped box from every reply form (the mode is in its key).
    @Test(arguments: ["pixels", "drawing", "imageFile"])
    func fillRequestsAreFilledInEveryReplyForm(reply: String) async throws {
        let f = try GeneratorFixture(providers: [StripesProvider(reply: reply)], types: Self.types)
        let path = try f.dir.write("pattern.stripes", Array("stripes v1".utf8))
        var request = ThumbnailRequest(fileAt: path, size: 16, representationTypes: .thumbnail)
        request.mode = .fill
        let r = try await f.generator.bestRepresentation(for: request)
        #expect(r.pixelWidth == 16 && r.pixelHeight == 16)
        let image = try r.image()
        #expect(image.pixels[0] > 200 && image.pixels[1] < 50)  // the centre crop: red on the left
        #expect(image.pixels[15 * 4 + 1] > 200 && image.pixels[15 * 4] < 50)  // green on the right
    }

    @Test func providersMatchExactTypesNotConformance() async throws {
        struct AnyImageProvider: ThumbnailProvider {
            var contentTypes: Set<ContentType> { [.image] }
            func provideThumbnail(for request: ThumbnailProviderRequest) throws -> ThumbnailReply { .pixels(RGBACanvas(width: 1, height: 1).image) }
        }
        let f = try GeneratorFixture(providers: [AnyImageProvider()])
        let png = try f.png("p.png")
        let request = ThumbnailRequest(fileAt: png, size: 64, representationTypes: .thumbnail)
        await #expect(throws: GenerationError.self) { try await f.generator.bestRepresentation(for: request) }
    }

    @Test func belowTheMinimumDimensionTheIconIsReturned() async throws {
        let f = try GeneratorFixture(providers: [StripesProvider(reply: "pixels", minimumDimension: 100)], types: Self.types)
        let path = try f.dir.write("small.stripes", Array("x".utf8))
        #expect(try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 64)).kind == .icon)
        #expect(try await f.generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128)).kind == .thumbnail)
    }

    @Test func contentTypesDetectByBytesThenName() {
        let t = ContentTypeRegistry()
        #expect(t.type(of: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], name: "photo.jpg") == .png)
        #expect(t.type(of: [0xFF, 0xD8, 0xFF, 0xE0], name: "noext") == .jpeg)
        #expect(t.type(of: Array("hello".utf8), name: "notes.txt") == .plainText)
        #expect(t.type(of: Array("hello".utf8), name: "readme") == .plainText)
        #expect(t.type(of: [0, 1, 2, 3], name: "blob") == .data)
        #expect(t.type(of: Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), name: "x") == .webP)
        // ISO-BMFF: `ftyp` at offset 4, the brand at 8; a name alone no longer makes a HEIC.
        #expect(t.type(of: [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0], name: "IMG_1.bin") == .heic)
        #expect(t.type(of: [0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 0, 0], name: "IMG_1.heic") != .heic)
        #expect(t.conforms(.png, to: .image) && t.conforms(.png, to: .data) && !t.conforms(.png, to: .text))
        #expect(t.tree(of: .png).starts(with: [.png, .image]))
        #expect(t.mimeType(of: .jpeg) == "image/jpeg")
    }
}

struct AccessRecordingTests {
    /// A cache hit through the generator is recorded (off the hit path, in a batch), so eviction
    /// keeps the thumbnail that was used even though it is older.
    @Test func cacheHitsCountForEviction() async throws {
        let dir = TemporaryDirectory()
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let used = try dir.write("used.png", ImageEncoder.png(testPhoto(width: 30, height: 20)))
        let unused = try dir.write("unused.png", ImageEncoder.png(testPhoto(width: 31, height: 20)))
        let spec = ThumbnailSpec(size: 64)
        // The used one is older: without its recorded hit it would be the one evicted.
        for (path, minute) in [(used, Int64(1)), (unused, Int64(2))] {
            let id = try store.identify(fileAt: path, hasher: ContentHasher())
            let header = ThumbnailHeader(encoding: .png, kind: .thumbnail, hasAlpha: false, pixelWidth: 30, pixelHeight: 20,
                                         scale: 1, created: minute * 60_000_000_000, sourceContentType: "public.png")
            try store.apply([.thumbnail(spec.key(for: id.content), header, data: ImageEncoder.png(testPhoto(width: 30, height: 20)))])
        }
        do {
            let generator = ThumbnailGenerator(store: store)
            let hit = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: used, size: 64, representationTypes: .thumbnail))
            #expect(hit.fromCache)
        }  // the generator is gone: its recorded hits are committed
        let one = try store.thumbnailBytes() / 2 + 1
        #expect(try store.evict(toFit: one).evictedThumbnails == 1)
        let usedContent = try store.identify(fileAt: used, hasher: ContentHasher()).content
        #expect(try store.containsThumbnail(spec.key(for: usedContent)))
    }
}

struct BudgetTests {
    /// With a budget, the cache trims itself in the background.
    @Test func theGeneratorKeepsTheCacheWithinItsBudget() async throws {
        let f = try GeneratorFixture()
        let one = try ImageEncoder.png(ThumbnailFactory.resize(testPhoto(width: 300, height: 200), to: ThumbnailSpec(size: 128))).count
        let generator = ThumbnailGenerator(store: f.store, budget: one * 4)
        for i in 0..<12 {
            let path = try f.png("p\(i).png", width: 300 + i, height: 200)
            _ = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: path, size: 128, representationTypes: .thumbnail))
        }
        // A check may be running from before the last commits: let it end, then check once more.
        await generator.budget?.waitUntilIdle()
        generator.budget?.check()
        await generator.budget?.waitUntilIdle()
        #expect((generator.budget?.trims ?? 0) >= 1)
        #expect(try f.store.thumbnailBytes() <= one * 4)
        #expect(try f.store.statistics().thumbnails >= 3)
    }
}
