#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where thumbcache's cache is and whether one exists there, known without opening the store:
/// the plug-in's program, which links no store, hands its call to `thumbcache` where one exists.
package enum CacheLocation {
    /// `$THUMBCACHE_DIR`, else `$XDG_CACHE_HOME/thumbcache`, else `~/.cache/thumbcache`.
    package static var standard: String {
        if let dir = FilePaths.environment("THUMBCACHE_DIR") { return dir }
        return FilePaths.cacheHome + "/thumbcache"
    }

    /// The symbolic link naming the generation in use (Docs/ARCHITECTURE.md, compaction).
    package static let generationLink = "current"

    /// The generation `current` names in `directory`, 0 without the link.
    package static func generation(in directory: String) -> Int {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = readlink(directory + "/" + generationLink, &buffer, buffer.count - 1)
        guard n > 0 else { return 0 }
        let name = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard name.hasPrefix("gen-"), let number = Int(name.dropFirst(4)) else { return 0 }
        return number
    }

    /// The environment directory of generation `n`: `directory` itself for 0, else `gen-N` in it.
    package static func path(ofGeneration n: Int, in directory: String) -> String {
        n == 0 ? directory : directory + "/gen-\(n)"
    }

    /// Whether a cache exists in `directory` (in the directory itself or, after a compaction, in
    /// the generation it names), without creating one.
    package static func holdsCache(_ directory: String) -> Bool {
        access(path(ofGeneration: generation(in: directory), in: directory) + "/data.mdb", F_OK) == 0
    }
}
