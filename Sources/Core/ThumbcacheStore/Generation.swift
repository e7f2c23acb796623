#if canImport(Glibc)
import Glibc
import ThumbcacheSync
#endif

/// A cache directory's generations: the environment in use is `directory` itself (generation 0)
/// or `directory/gen-N`, named by the symbolic link `directory/current`. Compaction writes the
/// next generation and switches the link atomically (see Docs/ARCHITECTURE.md).
enum Generation {
    static let link = CacheLocation.generationLink
    static let lockFile = "compact.lock"

    /// The generation `current` names, 0 without the link.
    static func current(in directory: String) -> Int { CacheLocation.generation(in: directory) }

    /// The environment directory of generation `n`.
    static func path(_ n: Int, in directory: String) -> String { CacheLocation.path(ofGeneration: n, in: directory) }

    /// Points `current` at generation `n`, atomically (symlink + rename), and flushes the directory.
    static func switchTo(_ n: Int, in directory: String) throws(StoreError) {
        let temporary = directory + "/" + link + ".tmp"
        unlink(temporary)
        guard symlink("gen-\(n)", temporary) == 0, rename(temporary, directory + "/" + link) == 0 else {
            throw .system("switch to generation \(n)", path: directory)
        }
        syncDirectory(directory)
    }

    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    static func syncFile(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    /// Deletes a directory tree of plain files (a generation); open maps keep their inodes alive.
    static func removeTree(_ path: String) {
        guard let dir = opendir(path) else {
            unlink(path)
            return
        }
        while let entry = readdir(dir) {
            if DirectoryEntry.isDotOrDotDot(entry) { continue }
            let child = path + "/" + DirectoryEntry.name(entry)
            if DirectoryEntry.type(entry) == UInt8(DT_DIR) { removeTree(child) } else { unlink(child) }
        }
        closedir(dir)
        rmdir(path)
    }

    /// Generations other than `keep` left in `directory` (old ones, or a copy a killed compaction left).
    static func others(than keep: Int, in directory: String) -> [Int] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [Int] = []
        while let entry = readdir(dir) {
            let name = DirectoryEntry.name(entry)
            if name.hasPrefix("gen-"), let n = Int(name.dropFirst(4)), n != keep { found.append(n) }
        }
        return found
    }
}
