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
        #expect(!ThumbnailPipeline.isContentFault(FileError(path: "p", reason: .changedWhileReading)))
        #expect(!ThumbnailPipeline.isContentFault(CancellationError()))
        #expect(ThumbnailPipeline.isContentFault(BrokenProvider.Unparseable()))
    }
}
