import FoundationEssentials
import ThumbcacheStore
import ThumbcacheSync

/// A `.thumbnailer` file: how GNOME's thumbnail factory and tumbler learn which program makes
/// thumbnails of which MIME types (`[Thumbnailer Entry]` with `TryExec`, `Exec`, `MimeType`).
package struct ThumbnailerEntry: Sendable, Hashable {
    /// The file's name without `.thumbnailer`: one name installed twice, the first found wins.
    package var name: String
    package var tryExec: String?
    /// The command line, with `%u` (the file's URI), `%i` (its path), `%o` (the PNG to write),
    /// `%s` (the size in pixels) and `%%`.
    package var exec: String
    package var mimeTypes: [String]
    /// Where it was read from, if it was.
    package var path: String?

    package init(name: String, tryExec: String? = nil, exec: String, mimeTypes: [String], path: String? = nil) {
        self.name = name
        self.tryExec = tryExec
        self.exec = exec
        self.mimeTypes = mimeTypes
        self.path = path
    }

    /// Parses the text of a `.thumbnailer` file; nil without an `Exec` and a `MimeType` in its
    /// `[Thumbnailer Entry]` group.
    package init?(parsing text: String, name: String, path: String? = nil) {
        var group = ""
        var values: [String: String] = [:]
        for raw in text.utf8.split(separator: UInt8(ascii: "\n")) {
            let line = Self.trimmed(Substring(raw))
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") { group = String(line.dropFirst().dropLast()); continue }
            guard group == "Thumbnailer Entry", let equals = line.firstIndex(of: "=") else { continue }
            values[String(Self.trimmed(line[..<equals]))] = String(Self.trimmed(line[line.index(after: equals)...]))
        }
        guard let exec = values["Exec"], !exec.isEmpty, let types = values["MimeType"] else { return nil }
        self.init(name: name, tryExec: values["TryExec"], exec: exec,
                  mimeTypes: types.split(separator: ";").map { String(Self.trimmed($0)) }.filter { !$0.isEmpty }, path: path)
    }

    /// `text` without the spaces, tabs and carriage returns around it, by its bytes: Foundation's
    /// trimming was most of reading the installed plug-ins, which every one-file miss does.
    private static func trimmed(_ text: Substring) -> Substring {
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        guard let first = text.utf8.firstIndex(where: { !blank($0) }), let last = text.utf8.lastIndex(where: { !blank($0) }) else { return "" }
        return text[first...last]
    }

    /// The file's text.
    package var text: String {
        var lines = ["[Thumbnailer Entry]"]
        if let tryExec { lines.append("TryExec=" + tryExec) }
        lines.append("Exec=" + exec)
        lines.append("MimeType=" + mimeTypes.map { $0 + ";" }.joined())
        return lines.joined(separator: "\n") + "\n"
    }

    /// The program and arguments for one file, `Exec`'s words (split as a shell would, quotes
    /// kept together) with each field code replaced, so a path with spaces stays one argument.
    /// Nil if the line does not parse or names an unknown field code.
    package func command(uri: String, input: String, output: String, size: Int) -> [String]? {
        guard let words = Self.words(exec), !words.isEmpty else { return nil }
        var command: [String] = []
        for word in words {
            var expanded = ""
            var characters = word.makeIterator()
            while let c = characters.next() {
                guard c == "%" else { expanded.append(c); continue }
                switch characters.next() {
                case "u": expanded += uri
                case "i": expanded += input
                case "o": expanded += output
                case "s": expanded += String(size)
                case "%": expanded += "%"
                default: return nil
                }
            }
            command.append(expanded)
        }
        return command
    }

    /// Whether `TryExec` (or else `Exec`'s program) names an executable program, by absolute
    /// path or on `PATH`, as GNOME checks before using a thumbnailer.
    package var isRunnable: Bool {
        guard let program = tryExec ?? Self.words(exec)?.first else { return false }
        return ProgramPaths.resolve(program) != nil
    }

    /// Splits a command line into words: spaces separate, single and double quotes group, a
    /// backslash escapes the next character (outside single quotes). Nil on an open quote.
    static func words(_ line: String) -> [String]? {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for c in line {
            if escaped {
                current.append(c)
                escaped = false
            } else if c == "\\" && quote != "'" {
                escaped = true
                inWord = true
            } else if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c
                inWord = true
            } else if c == " " || c == "\t" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(c)
                inWord = true
            }
        }
        guard quote == nil, !escaped else { return nil }
        if inWord { words.append(current) }
        return words
    }

    /// The installed thumbnailers: `$XDG_DATA_HOME/thumbnailers` first, then each of
    /// `$XDG_DATA_DIRS`; of two files with one name, the first found is used.
    package static func installed(dataHome: String = FilePaths.dataHome, dataDirectories: [String] = FilePaths.dataDirectories) -> [ThumbnailerEntry] {
        var found: [ThumbnailerEntry] = []
        var names: Set<String> = []
        for directory in [dataHome] + dataDirectories {
            let folder = directory + "/thumbnailers"
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for file in files.sorted() where file.hasSuffix(".thumbnailer") {
                let name = String(file.dropLast(".thumbnailer".count))
                guard !names.contains(name), let text = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8),
                    let entry = ThumbnailerEntry(parsing: text, name: name, path: folder + "/" + file)
                else { continue }
                names.insert(name)
                found.append(entry)
            }
        }
        return found
    }
}

extension ThumbnailerEntry {
    /// thumbcache's own entry for every MIME type its built-in provider makes thumbnails of:
    /// `thumbnailer --size %s %i %o` (the plug-in's program, `thumbcache-thumbnailer`, which
    /// hands a call to `executable` where a cache exists), else `executable freedesktop thumbnail
    /// --size %s %i %o`.
    package static func thumbcache(executable: String, thumbnailer: String? = nil, types: ContentTypeRegistry = ContentTypeRegistry()) -> ThumbnailerEntry {
        let mimeTypes = Set(ImageThumbnailProvider().contentTypes.compactMap { types.mimeType(of: $0) }).sorted()
        func quoted(_ program: String) -> String { program.contains(" ") ? "\"\(program)\"" : program }
        if let thumbnailer {
            return ThumbnailerEntry(name: "thumbcache", tryExec: thumbnailer, exec: quoted(thumbnailer) + " --size %s %i %o", mimeTypes: mimeTypes)
        }
        return ThumbnailerEntry(name: "thumbcache", tryExec: executable, exec: quoted(executable) + " freedesktop thumbnail --size %s %i %o", mimeTypes: mimeTypes)
    }
}
