import Foundation

/// Metadata indexes written by older format versions (Tests/ThumbcacheIndexTests/Fixtures,
/// each with a README saying which commit wrote it), for upgrade tests in any test target.
package enum IndexFixtures {
    /// Copies the version-`version` index into `directory` (created if needed) as its
    /// `data.mdb`, and returns `directory`.
    @discardableResult
    package static func copy(version: Int, into directory: String) throws -> String {
        let fixture = URL(fileURLWithPath: #filePath)  // Sources/Testing/ThumbcacheTestSupport/IndexFixtures.swift
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/ThumbcacheIndexTests/Fixtures/index-v\(version)/data.mdb")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture.path, toPath: directory + "/data.mdb")
        return directory
    }
}
