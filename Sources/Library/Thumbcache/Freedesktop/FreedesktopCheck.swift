import FoundationEssentials
import Glibc
import ThumbcacheImaging
import ThumbcacheStore

extension FreedesktopThumbnailCache {
    /// Checks the standard thumbnails thumbcache wrote (their `Software` key says so; other
    /// programs' are left alone): each is a whole PNG, every chunk's CRC right and nothing after
    /// `IEND`, named by the MD5 of the URI it carries, within its size's box, with the keys the
    /// standard requires. One whose file changed or went is stale: garbage, as the standard
    /// expects, which `thumbcache freedesktop clean` removes. A temporary file of a writer that
    /// no longer runs is a violation too.
    package func check() -> IntegrityReport {
        var report = IntegrityReport()
        for folder in thumbnailFolders {
            let database = String(folder.dropFirst(directory.count + 1))
            let box = Size(rawValue: database)?.pixels
            let failures = database.hasPrefix("fail/")
            // Other programs' failure records are theirs to keep.
            guard !failures || database.hasPrefix("fail/thumbcache-"), let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() {
                let path = folder + "/" + name
                var s = stat()
                guard lstat(path, &s) == 0, s.st_mode & S_IFMT == S_IFREG else { continue }
                func found(_ problem: String) {
                    report.found(IntegrityFinding(database: database, record: name, problem: problem, repair: "file removed", key: Array(path.utf8)))
                }
                if name.hasPrefix(".thumbcache-") {
                    report.read(database)
                    if let writer = Self.writerProcess(ofTemporary: name), kill(writer, 0) != 0, errno == ESRCH {
                        found("a temporary file of writer \(writer), which no longer runs")
                    }
                    continue
                }
                guard name.hasSuffix(".png"), let bytes = try? Self.contents(of: path) else { continue }
                guard let keys = PNGText.parse(Array(bytes.prefix(PNGText.headLimit))), keys["Software"]?.hasPrefix("thumbcache ") == true
                else { continue }
                report.read(database)
                if let problem = Self.problem(bytes: bytes, keys: keys, name: name, box: failures ? 1 : box) {
                    found(problem)
                } else if Self.state(of: keys, name: name) == .stale {
                    report.garbage["stale freedesktop thumbnails", default: 0] += 1
                }
            }
        }
        return report
    }

    /// Removes the files `report` found at fault; returns how many went.
    package func repair(_ report: IntegrityReport) -> Int {
        report.findings.reduce(0) { removed, finding in
            let path = String(decoding: finding.key, as: UTF8.self)
            // Only what lies in this cache: a report is data, not a licence to unlink anywhere.
            guard path.hasPrefix(directory + "/"), !path.contains("/../"), unlink(path) == 0 else { return removed }
            return removed + 1
        }
    }

    /// What is wrong with a thumbnail thumbcache wrote; nil when nothing is.
    static func problem(bytes: [UInt8], keys: [String: String], name: String, box: Int?) -> String? {
        do {
            _ = try PNGChunks.extracting("tcNO", from: bytes)
        } catch {
            return "not a whole PNG: \(error.description)"
        }
        guard let uri = keys["Thumb::URI"], !uri.isEmpty else { return "no Thumb::URI" }
        guard keys["Thumb::MTime"].flatMap({ Int64($0) }) != nil else { return "no Thumb::MTime" }
        guard Self.name(forURI: uri) == name else { return "named for another URI than its Thumb::URI \(uri)" }
        // IHDR comes first (the chunk walk checked it is whole): its width and height.
        let field = { (at: Int) in bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { return "no IHDR first" }
        if let box, field(16) > box || field(20) > box {
            return "\(field(16))×\(field(20)) is larger than its folder's \(box)×\(box)"
        }
        return nil
    }

    /// The process id in a temporary file's name (`.thumbcache-PID-RANDOM.png`).
    static func writerProcess(ofTemporary name: String) -> pid_t? {
        let parts = name.dropFirst(".thumbcache-".count).split(separator: "-")
        return parts.count == 2 ? pid_t(parts[0]) : nil
    }

    /// A thumbnail's bytes (they are small: a 1024-pixel thumbnail is at most a few MB).
    static func contents(of path: String) throws -> [UInt8] {
        let file = try ImageFile(path: path)
        let reader = try ByteReader(descriptor: file.descriptor, name: path)
        return try reader.bytes(at: 0, count: min(reader.size, 64 << 20), what: "thumbnail")
    }
}
