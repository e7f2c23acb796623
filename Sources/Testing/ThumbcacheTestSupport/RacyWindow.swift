import Foundation

/// The stat cache's racy window (Docs/FORMAT.md): an entry recorded within 2 s of its file's last
/// change (mtime or ctime) is hashed again next time. A test that needs settled entries waits
/// for that condition on its own files, not for a fixed time.
package enum RacyWindow {
    package static let seconds = 2.0

    /// Returns once every file under `paths` (files or directories, recursively) last changed
    /// more than the racy window ago.
    package static func waitUntilSettled(_ paths: [String]) {
        var newest = 0.0
        for path in paths {
            let files = FileManager.default.subpaths(atPath: path).map { $0.map { path + "/" + $0 } } ?? []
            for file in [path] + files {
                var s = stat()
                guard lstat(file, &s) == 0 else { continue }
                let changed = max(Double(s.st_mtim.tv_sec) + Double(s.st_mtim.tv_nsec) / 1e9,
                                  Double(s.st_ctim.tv_sec) + Double(s.st_ctim.tv_nsec) / 1e9)
                newest = max(newest, changed)
            }
        }
        let left = newest + seconds + 0.05 - Date().timeIntervalSince1970
        if left > 0 { usleep(UInt32(left * 1e6)) }
    }
}
