import Foundation
import ThumbcacheImaging
import ThumbcacheStore

/// What cleaning the standard thumbnail cache did (or, in a dry run, would do).
public struct FreedesktopCleaningReport: Sendable, Codable, Hashable {
    /// Thumbnail files looked at, in every size directory and under `fail/`.
    public var examined = 0
    /// Removed because their file is gone or changed (or they carry no valid keys).
    public var stale = 0
    /// Removed, least recently used first, to bring the cache within the size asked for.
    public var evicted = 0
    /// Left-over temporary files of interrupted writers, removed.
    public var temporaryFiles = 0
    public var bytesBefore = 0
    public var bytesRemoved = 0
    /// Thumbnails of files that are not local (`sftp://`, `trash://`…): kept, as nothing here can check them.
    public var notLocal = 0
    public var errors: [String] = []

    public var bytesAfter: Int { bytesBefore - bytesRemoved }
}

extension FreedesktopThumbnailCache {
    /// Removes thumbnails whose file is gone or changed (the standard's validity check, against
    /// the file as it is now), then, if `maxBytes` is given, the least recently used (by access,
    /// else modification time) until the rest fit. Any program's thumbnails, not only thumbcache's:
    /// the standard leaves cleaning to implementations, and none does it.
    public func clean(maxBytes: Int? = nil, dryRun: Bool = false) -> FreedesktopCleaningReport {
        var report = FreedesktopCleaningReport()
        var kept: [(path: String, bytes: Int, used: Int64)] = []
        let fail = directory + "/fail"
        let folders = Size.allCases.map { directory + "/" + $0.rawValue }
            + ((try? FileManager.default.contentsOfDirectory(atPath: fail)) ?? []).sorted().map { fail + "/" + $0 }
        let hourAgo = Int64(Date().timeIntervalSince1970) - 3600
        for folder in folders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() {
                let path = folder + "/" + name
                var s = stat()
                guard lstat(path, &s) == 0, s.st_mode & S_IFMT == S_IFREG else { continue }
                let bytes = Int(s.st_size)
                report.bytesBefore += bytes
                func remove() {
                    report.bytesRemoved += bytes
                    if !dryRun && unlink(path) != 0 { report.errors.append("\(path): \(String(cString: strerror(errno)))") }
                }
                if name.hasPrefix(".thumbcache-") {
                    // Ours, from a writer that died between writing and renaming.
                    if Int64(s.st_mtim.tv_sec) < hourAgo {
                        report.temporaryFiles += 1
                        remove()
                    }
                    continue
                }
                guard name.hasSuffix(".png") else { continue }
                report.examined += 1
                switch Self.state(ofThumbnailAt: path) {
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

    /// A thumbnail checked against its file as it is now.
    static func state(ofThumbnailAt path: String) -> ThumbnailState {
        guard let keys = PNGText.read(path: path), let uri = keys["Thumb::URI"] else { return .stale }
        guard uri.hasPrefix("file://") else { return .notLocal }
        guard let file = FileURI.path(of: uri), name(forURI: uri) == (path as NSString).lastPathComponent,
            let snapshot = try? FileSnapshot.of(path: file)
        else { return .stale }
        return matches(keys, Source(uri: uri, modificationTime: Source(path: file, snapshot: snapshot).modificationTime, size: snapshot.size))
            ? .valid : .stale
    }
}
