import FoundationEssentials
import Glibc
import ThumbcacheImaging
import ThumbcacheStore

/// What cleaning the standard thumbnail cache did (or, in a dry run, would do).
package struct FreedesktopCleaningReport: Sendable, Codable, Hashable {
    /// Thumbnail files looked at, in every size directory and under `fail/`.
    package var examined = 0
    /// Removed because their file is gone or changed (or they carry no valid keys).
    package var stale = 0
    /// Removed, least recently used first, to bring the cache within the size asked for.
    package var evicted = 0
    /// Left-over temporary files of interrupted writers, removed.
    package var temporaryFiles = 0
    package var bytesBefore = 0
    package var bytesRemoved = 0
    /// Thumbnails of files that are not local (`sftp://`, `trash://`…): kept, as nothing here can check them.
    package var notLocal = 0
    package var errors: [String] = []

    package var bytesAfter: Int { bytesBefore - bytesRemoved }
}

extension FreedesktopThumbnailCache {
    /// Every size directory and every program's failure directory.
    var thumbnailFolders: [String] {
        let fail = directory + "/fail"
        return Size.allCases.map { directory + "/" + $0.rawValue }
            + ((try? FileManager.default.contentsOfDirectory(atPath: fail)) ?? []).sorted().map { fail + "/" + $0 }
    }

    /// Removes thumbnails whose file is gone or changed (the standard's validity check, against
    /// the file as it is now), then, if `maxBytes` is given, the least recently used (by access,
    /// else modification time) until the rest fit. Any program's thumbnails, not only thumbcache's:
    /// the standard leaves cleaning to implementations, and none does it.
    /// - Parameters:
    ///   - maxBytes: after the stale ones, remove the least recently used until the rest fit.
    ///   - dryRun: report what would be removed, remove nothing.
    ///   - baseURIs: only thumbnails of files under these URIs (all if empty), as `Cache1.Cleanup` asks.
    ///   - writtenSince: only thumbnails written at or after this time (seconds since 1970).
    package func clean(maxBytes: Int? = nil, dryRun: Bool = false, under baseURIs: [String] = [], writtenSince: Int64 = 0)
        -> FreedesktopCleaningReport
    {
        var report = FreedesktopCleaningReport()
        var kept: [(path: String, bytes: Int, used: Int64)] = []
        let everything = baseURIs.isEmpty && writtenSince == 0
        let hourAgo = Int64(Date().timeIntervalSince1970) - 3600
        for folder in thumbnailFolders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() {
                let path = folder + "/" + name
                var s = stat()
                guard lstat(path, &s) == 0, s.st_mode & S_IFMT == S_IFREG, Int64(s.st_mtim.tv_sec) >= writtenSince else { continue }
                let bytes = Int(s.st_size)
                func remove() {
                    report.bytesRemoved += bytes
                    if !dryRun && unlink(path) != 0 { report.errors.append("\(path): \(String(cString: strerror(errno)))") }
                }
                guard name.hasSuffix(".png"), !name.hasPrefix(".thumbcache-") else {
                    report.bytesBefore += bytes
                    // Ours, from a writer that died between writing and renaming (a full clean only).
                    if name.hasPrefix(".thumbcache-") && everything && Int64(s.st_mtim.tv_sec) < hourAgo {
                        report.temporaryFiles += 1
                        remove()
                    }
                    continue
                }
                let keys = PNGText.read(path: path)
                if !baseURIs.isEmpty {
                    guard let uri = keys?["Thumb::URI"], baseURIs.contains(where: { uri.hasPrefix($0) }) else { continue }
                }
                report.bytesBefore += bytes
                report.examined += 1
                switch Self.state(of: keys, name: name) {
                case .notLocal:
                    report.notLocal += 1
                    kept.append((path, bytes, max(Int64(s.st_atim.tv_sec), Int64(s.st_mtim.tv_sec))))
                case .stale:
                    report.stale += 1
                    remove()
                case .valid: kept.append((path, bytes, max(Int64(s.st_atim.tv_sec), Int64(s.st_mtim.tv_sec))))
                }
            }
        }
        if let maxBytes {
            var total = report.bytesAfter
            for entry in kept.sorted(by: { $0.used < $1.used }) where total > maxBytes {
                total -= entry.bytes
                report.evicted += 1
                report.bytesRemoved += entry.bytes
                if !dryRun && unlink(entry.path) != 0 { report.errors.append("\(entry.path): \(String(cString: strerror(errno)))") }
            }
        }
        return report
    }

    enum ThumbnailState { case valid, stale, notLocal }

    /// A thumbnail (its keys and its file name) checked against its file as it is now.
    static func state(of keys: [String: String]?, name: String) -> ThumbnailState {
        guard let keys, let uri = keys["Thumb::URI"] else { return .stale }
        guard uri.hasPrefix("file://") else { return .notLocal }
        guard let file = FileURI.path(of: uri), self.name(forURI: uri) == name, let snapshot = try? FileSnapshot.of(path: file) else {
            return .stale
        }
        return matches(keys, Source(uri: uri, snapshot: snapshot)) ? .valid : .stale
    }
}
