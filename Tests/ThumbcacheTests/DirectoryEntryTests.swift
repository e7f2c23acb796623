import Glibc
import Testing
import ThumbcacheSync

/// A `readdir` record is only as long as its name: reading one must not touch the bytes after
/// it (`serve` crashed copying a whole `dirent` whose record ended before unmapped memory).
struct DirectoryEntryTests {
    /// A short record placed so that it ends where readable memory ends: reading its name and type
    /// stops at its NUL.
    @Test func anEntryIsReadUpToItsNameOnly() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let memory = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        defer { munmap(memory, 2 * page) }
        #expect(mprotect(memory + page, page, PROT_NONE) == 0)
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let name: [UInt8] = Array("ab".utf8) + [0]
        // Eight-byte aligned, as the kernel lays records out; the name's NUL is the page's last byte.
        let start = page - nameOffset - name.count
        let record = memory + start - start % 8
        let nameAt = record + nameOffset
        let padding = memory + page - nameAt - name.count
        for (i, byte) in (Array(repeating: UInt8(ascii: "x"), count: padding) + name).enumerated() {
            nameAt.storeBytes(of: byte, toByteOffset: i, as: UInt8.self)
        }
        record.storeBytes(of: UInt8(DT_REG), toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_type)!, as: UInt8.self)
        let entry = record.assumingMemoryBound(to: dirent.self)
        #expect(DirectoryEntry.name(entry) == String(repeating: "x", count: padding) + "ab")
        #expect(DirectoryEntry.type(entry) == UInt8(DT_REG))
        #expect(!DirectoryEntry.isDotOrDotDot(entry))
    }

    @Test func dotAndDotDotAreKnownByTheirBytes() throws {
        let directory = try #require(opendir("/"))
        defer { closedir(directory) }
        var names: [String] = []
        var dots = 0
        while let entry = readdir(directory) {
            names.append(DirectoryEntry.name(entry))
            if DirectoryEntry.isDotOrDotDot(entry) { dots += 1 }
        }
        #expect(dots == 2 && names.contains("usr") && names.contains("..") && names.contains("."))
    }
}
