import Foundation
import SystemPackage
import Testing
import Thumbcache

/// What an app that embeds the cache writes, with nothing but `import Thumbcache` (the
/// getting-started article in the DocC catalog walks through the same steps).
struct EmbeddingTests {
    @Test func anAppMakesCachesAndSearchesWithOneImport() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("thumbcache-app-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let photo = root.appendingPathComponent("beach holiday.png")
        let pixels = [UInt8](repeating: 200, count: 320 * 240 * 4)
        try Data(ImageEncoder.png(RGBAImage(width: 320, height: 240, pixels: pixels, hasAlpha: false))).write(to: photo)

        let store = try ThumbnailStore.open(directory: root.appendingPathComponent("cache").path)
        let generator = ThumbnailGenerator(store: store)
        let request = ThumbnailRequest(fileAt: photo.path, size: 64, scale: 2)
        var kinds: [RepresentationKind] = []
        for try await representation in generator.representations(for: request) { kinds.append(representation.kind) }
        #expect(kinds == [.icon, .thumbnail])
        let again = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: photo.path, size: 64, scale: 2))
        #expect(again.fromCache && again.pixelWidth == 128 && again.pixelHeight == 96)

        let index = try MetadataIndex.open(directory: root.appendingPathComponent("index").path)
        try index.index([SearchableItem(uniqueIdentifier: "note-1", attributes: [MDItem.title: .string("Holiday packing list")])])
        let found = try index.search("holiday")
        #expect(found.results.map(\.identifier) == ["note-1"])
    }

    /// Files and directories are named by `URL`, `FilePath` or `String`, whichever the app holds;
    /// all three are the same file to the cache (one stat-cache entry, one thumbnail).
    @Test func pathsAreURLsFilePathsOrStrings() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("thumbcache-app-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("photos"), withIntermediateDirectories: true)
        let photo = root.appendingPathComponent("photos/sea view.png")
        let pixels = [UInt8](repeating: 90, count: 200 * 100 * 4)
        try Data(ImageEncoder.png(RGBAImage(width: 200, height: 100, pixels: pixels, hasAlpha: false))).write(to: photo)

        let store = try ThumbnailStore.open(directory: root.appendingPathComponent("cache"))
        let summary = await Warmer(store: store).warm([root.appendingPathComponent("photos")], options: .init(jobs: 1))
        #expect(summary.generated == 1, "\(summary)")

        let generator = ThumbnailGenerator(store: store)
        let byURL = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: photo, size: 256))
        let byFilePath = try await generator.bestRepresentation(for: ThumbnailRequest(fileAt: FilePath(photo.path), size: 256))
        #expect(byURL.fromCache && byFilePath.fromCache)
        #expect(byURL.data == byFilePath.data)
        try await generator.saveBestRepresentation(for: ThumbnailRequest(fileAt: photo.path, size: 256),
                                                   to: root.appendingPathComponent("out.png"))
        #expect(try ImageFormat.detect(fileAt: root.appendingPathComponent("out.png")) == .png)
        #expect(try Thumbnailer.info(ofFileAt: FilePath(photo.path)).pixelWidth == 200)
        #expect(try store.statistics().files == 1)

        let index = try MetadataIndex.open(directory: FilePath(root.appendingPathComponent("index").path))
        #expect(try index.statistics().items == 0)
    }
}
