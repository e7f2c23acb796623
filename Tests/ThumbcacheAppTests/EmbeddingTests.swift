import Foundation
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
}
