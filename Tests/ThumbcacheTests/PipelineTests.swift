import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheTestSupport
@testable import Thumbcache

/// The generator and the warmer run one pipeline, so its rules hold for both.
struct PipelineTests {
    static let broken: ContentType = "org.example.broken"

    static var types: ContentTypeRegistry {
        var t = ContentTypeRegistry()
        t.declare(ContentTypeDeclaration(broken, conformsTo: [.image], extensions: ["broken"]))
        return t
    }

    /// A provider whose files always fail with an error of its own (not an ImagingError).
    struct BrokenProvider: ThumbnailProvider {
        struct Unparseable: Error, CustomStringConvertible { var description: String { "no frames in this file" } }
        var contentTypes: Set<ContentType> { [PipelineTests.broken] }
        func provideThumbnail(for request: ThumbnailProviderRequest) throws -> ThumbnailReply { throw Unparseable() }
    }

    /// The stat cache keeps a file's type under the registry's stamp: the same declarations give
    /// the same stamp, and any change to what detection reads (a magic's offset or bytes, an
    /// extension, a parent) gives another, so those types are detected again.
    @Test func theTypesStampFollowsWhatDetectionReads() {
        func stamp(_ magic: Magic, extensions: [String] = ["broken"], parents: [ContentType] = [.image]) -> UInt32 {
            var t = ContentTypeRegistry()
            t.declare(ContentTypeDeclaration(Self.broken, conformsTo: parents, extensions: extensions, magic: [magic]))
            return t.stamp
        }
        let base = stamp(Magic("BRK").and("!", at: 8))
        #expect(stamp(Magic("BRK").and("!", at: 8)) == base)
        #expect(stamp(Magic("BRK").and("!", at: 9)) != base)
        #expect(stamp(Magic("BRL").and("!", at: 8)) != base)
        #expect(stamp(Magic("BR").and("K!", at: 8)) != base)
        #expect(stamp(Magic("BRK").and("!", at: 8), extensions: ["broken", "brk"]) != base)
        #expect(stamp(Magic("BRK").and("!", at: 8), parents: [.image, .data]) != base)
        #expect(base != ContentTypeRegistry().stamp)
    }

    /// A provider's own error about a file is remembered by the generator as by the warmer (the
    /// generator used to remember only decoder errors, and asked the provider again every time).
    @Test func aProvidersFailureIsRememberedByTheGeneratorAsByTheWarmer() async throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("a.broken", Array("not really".utf8))
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let generator = ThumbnailGenerator(store: store, providers: [BrokenProvider()], types: Self.types)
        let request = ThumbnailRequest(fileAt: path, size: 64, representationTypes: .thumbnail)
        await #expect(throws: BrokenProvider.Unparseable.self) { try await generator.bestRepresentation(for: request) }
        let again = await #expect(throws: GenerationError.self) { try await generator.bestRepresentation(for: request) }
        #expect(again?.description.contains("no frames in this file (recorded earlier") == true, "\(String(describing: again))")
        #expect(generator.generationCount == 1)

        let other = dir.appending("b.broken")
        try Data("also not".utf8).write(to: URL(fileURLWithPath: other))
        let summary = await Warmer(store: store, providers: [BrokenProvider()], types: Self.types).warm([other], options: .init(jobs: 1))
        #expect(summary.failures["no frames in this file"] == [other], "\(summary.failures)")
        let content = try ContentHasher().hash(fileAt: other).hash
        #expect(try store.failure(content: content, generatorVersion: thumbnailGeneratorVersion)?.reason == "no frames in this file")
    }

    /// A warm that needs a smaller box of content the cache has a larger thumbnail of shrinks
    /// that thumbnail instead of decoding the file again (the generator always did).
    @Test func theWarmerShrinksALargerCachedThumbnail() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("tree"), withIntermediateDirectories: true)
        try dir.write("tree/photo.png", ImageEncoder.png(testPhoto(width: 900, height: 600)))
        let store = try ThumbnailStore.open(directory: dir.appending("cache"))
        let first = Warmer(store: store)
        _ = await first.warm([dir.appending("tree")], options: .init(jobs: 1, specs: [ThumbnailSpec(size: 512)]))
        #expect(first.factory.renderCount == 1)
        let second = Warmer(store: store)
        let summary = await second.warm([dir.appending("tree")], options: .init(jobs: 1, specs: [ThumbnailSpec(size: 128)]))
        #expect(summary.generated == 1)
        #expect(second.factory.renderCount == 0)
        let content = try ContentHasher().hash(fileAt: dir.appending("tree/photo.png")).hash
        let small = try #require(try store.thumbnail(ThumbnailSpec(size: 128).key(for: content)))
        #expect(small.header.pixelWidth == 128 && small.header.pixelHeight == 85)
    }

    @Test func whatCountsAsTheContentsFault() {
        #expect(ThumbnailPipeline.isContentFault(ImagingError(path: "p", reason: .corrupt("bad"))))
        #expect(!ThumbnailPipeline.isContentFault(ImagingError(path: "p", reason: .unreadable("Permission denied"))))
        #expect(!ThumbnailPipeline.isContentFault(ImagingError(path: "p", reason: .decodedElsewhere(by: "heavy"))))
        #expect(!ThumbnailPipeline.isContentFault(FileError(path: "p", reason: .changedWhileReading)))
        #expect(!ThumbnailPipeline.isContentFault(CancellationError()))
        #expect(ThumbnailPipeline.isContentFault(BrokenProvider.Unparseable()))
    }
}
