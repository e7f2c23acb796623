#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `readdir` returned, read in place. A record is only as long as its name (`d_reclen`), so
/// copying the whole `dirent` (its name's full array) reads past the end of the buffer readdir
/// filled, a crash where the buffer's last record ends before unmapped memory.
package enum DirectoryEntry {
    /// The entry's name, read up to its NUL.
    package static func name(_ entry: UnsafePointer<dirent>) -> String {
        String(cString: namePointer(entry))
    }

    /// The entry's `d_type` (`DT_REG`, `DT_DIR`…; `DT_UNKNOWN` where the file system does not say).
    package static func type(_ entry: UnsafePointer<dirent>) -> UInt8 {
        UnsafeRawPointer(entry).load(fromByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_type)!, as: UInt8.self)
    }

    /// Whether the entry is `.` or `..`, read without making its name.
    package static func isDotOrDotDot(_ entry: UnsafePointer<dirent>) -> Bool {
        let n = namePointer(entry)
        return n[0] == 0x2E && (n[1] == 0 || (n[1] == 0x2E && n[2] == 0))
    }

    private static func namePointer(_ entry: UnsafePointer<dirent>) -> UnsafePointer<CChar> {
        (UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!).assumingMemoryBound(to: CChar.self)
    }
}
