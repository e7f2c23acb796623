import CThumbcacheFileInfo
#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheStore
import ThumbcacheSync

/// A file's tags as KDE's Dolphin and GNOME's Nautilus keep them: the `user.xdg.tags` extended
/// attribute, comma-separated. The index reads them as kMDItemUserTags.
public enum FileTags {
    /// The most bytes a tag list may take (ext4 allows about 4 KB of attributes per file).
    public static let maximumBytes = 2048

    /// The file's tags, in the order written; empty if it has none.
    public static func read(path: String) -> [String] {
        parse(FileMetadata.extendedAttribute(path, FileMetadata.tagsAttribute) ?? "")
    }

    /// Replaces the file's tags; an empty list removes the attribute.
    public static func write(_ tags: [String], path: String) throws(FileError) {
        let text = tags.joined(separator: ",")
        guard text.utf8.count <= maximumBytes else { throw FileError(path: path, reason: .system(operation: "setxattr", Errno(rawValue: E2BIG))) }
        let result: Int32 =
            tags.isEmpty
            ? cfi_removexattr(path, FileMetadata.tagsAttribute)
            : cfi_setxattr(path, FileMetadata.tagsAttribute, text, text.utf8.count)
        if result != 0 {
            let error = Errno(rawValue: errno)
            if tags.isEmpty && error.rawValue == ENODATA { return }
            throw .failure(tags.isEmpty ? "removexattr" : "setxattr", error, path: path)
        }
    }

    /// Adds `tag` (if the file does not have it) and returns the new list.
    public static func add(_ tag: String, path: String) throws(FileError) -> [String] {
        var tags = read(path: path)
        guard !tags.contains(tag) else { return tags }
        tags.append(tag)
        try write(tags, path: path)
        return tags
    }

    /// Removes `tag` (if the file has it) and returns the new list.
    public static func remove(_ tag: String, path: String) throws(FileError) -> [String] {
        var tags = read(path: path)
        guard tags.contains(tag) else { return tags }
        tags.removeAll { $0 == tag }
        try write(tags, path: path)
        return tags
    }

    /// True for a tag that reads back as itself: not empty, no comma (the separator), no control
    /// characters, no surrounding spaces, at most 256 bytes.
    public static func isValid(_ tag: String) -> Bool {
        !tag.isEmpty && tag.utf8.count <= 256 && !tag.contains(",") && tag == tag.trimmingWhitespace(newlines: false)
            && !tag.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    static func parse(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingWhitespace(newlines: false) }.filter { !$0.isEmpty }
    }
}
