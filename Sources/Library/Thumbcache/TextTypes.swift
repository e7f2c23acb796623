import FoundationEssentials
import ThumbcacheImaging
import ThumbcacheStore

/// The text content types: Apple's identifiers for the common kinds (source code, scripts,
/// markup, data) and every other type shared-mime-info puts under `text/plain`, each with the
/// extensions and file names its globs give. Every one of them is drawn as a page of text.
enum TextTypes {
    /// A kind of text Apple names, the MIME types it stands for and the names that say it
    /// without shared-mime-info.
    struct Known {
        var type: ContentType
        var conformsTo: ContentType
        var mimeTypes: [String]
        var extensions: [String]
    }

    /// Every text type the built-in registry declares.
    static let identifiers = Set(ContentTypeRegistry.text.map(\.type))

    /// Whether `type` is one of ``identifiers``: a built-in type besides them (a format's) is
    /// answered without reading shared-mime-info, which declares the text types.
    static func isText(_ type: ContentType) -> Bool {
        !ContentTypeRegistry.catalogued.declares(type) && identifiers.contains(type)
    }

    static let sourceCode = ContentType.sourceCode
    static let script: ContentType = "public.script"
    static let delimitedText: ContentType = "public.delimited-values-text"

    static let known: [Known] = [
        Known(type: .plainText, conformsTo: .text, mimeTypes: ["text/plain"], extensions: ["txt", "text"]),
        Known(type: sourceCode, conformsTo: .plainText, mimeTypes: [], extensions: []),
        Known(type: script, conformsTo: sourceCode, mimeTypes: [], extensions: []),
        Known(type: delimitedText, conformsTo: .text, mimeTypes: [], extensions: []),
        Known(type: "public.c-source", conformsTo: sourceCode, mimeTypes: ["text/x-csrc"], extensions: ["c"]),
        Known(type: "public.c-header", conformsTo: sourceCode, mimeTypes: ["text/x-chdr"], extensions: ["h"]),
        Known(type: "public.c-plus-plus-source", conformsTo: sourceCode, mimeTypes: ["text/x-c++src"], extensions: ["cpp", "cc", "cxx"]),
        Known(type: "public.c-plus-plus-header", conformsTo: sourceCode, mimeTypes: ["text/x-c++hdr"], extensions: ["hpp", "hh", "hxx"]),
        Known(type: "public.objective-c-source", conformsTo: sourceCode, mimeTypes: ["text/x-objcsrc"], extensions: ["m"]),
        Known(type: "public.swift-source", conformsTo: sourceCode, mimeTypes: ["text/x-swift"], extensions: ["swift"]),
        Known(type: "com.sun.java-source", conformsTo: sourceCode, mimeTypes: ["text/x-java"], extensions: ["java"]),
        Known(type: "com.netscape.javascript-source", conformsTo: sourceCode, mimeTypes: ["application/javascript", "text/javascript"],
              extensions: ["js", "mjs"]),
        Known(type: "public.python-script", conformsTo: script, mimeTypes: ["text/x-python", "text/x-python3"], extensions: ["py"]),
        Known(type: "public.shell-script", conformsTo: script, mimeTypes: ["application/x-shellscript"], extensions: ["sh", "bash"]),
        Known(type: "public.ruby-script", conformsTo: script, mimeTypes: ["application/x-ruby"], extensions: ["rb"]),
        Known(type: "public.perl-script", conformsTo: script, mimeTypes: ["application/x-perl"], extensions: ["pl", "pm"]),
        Known(type: "public.php-script", conformsTo: script, mimeTypes: ["application/x-php"], extensions: ["php"]),
        Known(type: "public.json", conformsTo: .text, mimeTypes: ["application/json"], extensions: ["json"]),
        Known(type: "public.xml", conformsTo: .text, mimeTypes: ["application/xml", "text/xml"], extensions: ["xml"]),
        Known(type: "public.html", conformsTo: .text, mimeTypes: ["text/html"], extensions: ["html", "htm"]),
        Known(type: "public.yaml", conformsTo: .text, mimeTypes: ["application/x-yaml", "application/yaml"], extensions: ["yaml", "yml"]),
        Known(type: "net.daringfireball.markdown", conformsTo: .plainText, mimeTypes: ["text/markdown", "text/x-markdown"],
              extensions: ["md", "markdown"]),
        Known(type: "public.comma-separated-values-text", conformsTo: delimitedText, mimeTypes: ["text/csv"], extensions: ["csv"]),
        Known(type: "public.tab-separated-values-text", conformsTo: delimitedText, mimeTypes: ["text/tab-separated-values"], extensions: ["tsv"]),
        Known(type: "public.log", conformsTo: .plainText, mimeTypes: ["text/x-log"], extensions: ["log"]),
    ]

    /// Only a name that says text, and bytes that read as text, together make a text type: a
    /// binary file called `notes.txt` stays `public.data`.
    static let sniffer = FormatDeclaration.Sniffer(name: "text", span: 4096, needsExtension: true) { TextSniffer.looksLikeText($0) }

    /// The identifier of a MIME type without an Apple name: `text/x-rust` → `org.freedesktop.mime.text.x-rust`.
    static func identifier(mimeType: String) -> ContentType {
        ContentType("org.freedesktop.mime." + String(mimeType.map { $0 == "/" ? "." : $0 }))
    }

    /// The declarations of every text type, given the types already declared (`taken`: their
    /// MIME types and extensions are not claimed again, so `*.svg`, a subclass of XML in
    /// shared-mime-info, stays an image). Read from shared-mime-info once per process.
    static func declarations(besides taken: [ContentTypeDeclaration], mime: SharedMIMEInfo = .system) -> [ContentTypeDeclaration] {
        let takenMIME = Set(taken.compactMap(\.mimeType))
        var takenNames = Set(taken.flatMap(\.extensions).map { "*." + $0 })
        var out: [ContentType: ContentTypeDeclaration] = [:]
        var order: [ContentType] = []
        func add(_ type: ContentType, conformsTo parent: ContentType, mimeType: String?) {
            guard out[type] == nil else { return }
            var d = ContentTypeDeclaration(type, conformsTo: [parent], mimeType: mimeType)
            d.sniffer = sniffer
            out[type] = d
            order.append(type)
        }
        var typeOfMIME: [String: ContentType] = [:]
        for k in known {
            add(k.type, conformsTo: k.conformsTo, mimeType: k.mimeTypes.first)
            for m in k.mimeTypes { typeOfMIME[m] = k.type }
            for e in k.extensions where takenNames.insert("*." + e).inserted { out[k.type]!.extensions.append(e) }
        }
        // Every other text type shared-mime-info knows, under its nearest known ancestor.
        var notText: Set<String> = []  // a type with many globs is asked about once
        func type(of m: String) -> ContentType? {
            if let t = typeOfMIME[m] { return t }
            guard !notText.contains(m) else { return nil }
            guard !takenMIME.contains(m), mime.isText(m) else {
                notText.insert(m)
                return nil
            }
            let parent = mime.parents(of: m).lazy.compactMap { type(of: $0) }.first ?? .plainText
            let t = identifier(mimeType: m)
            typeOfMIME[m] = t
            add(t, conformsTo: parent, mimeType: m)
            return t
        }
        for (pattern, m) in mime.globs {
            guard let t = type(of: m), !takenNames.contains(pattern) else { continue }
            takenNames.insert(pattern)
            if pattern.hasPrefix("*.") {
                out[t]!.extensions.append(String(pattern.dropFirst(2)))
            } else {
                out[t]!.filenames.append(pattern)
            }
        }
        return order.map { out[$0]! }
    }
}

/// What shared-mime-info's database says of MIME types: the globs that name them and what each
/// is a subclass of (`globs2`, `subclasses` and `aliases` under each `$XDG_DATA_DIRS/mime`).
struct SharedMIMEInfo: Sendable {
    /// Simple globs (`*.ext`, or a whole file name), lower case, with the type of highest weight.
    private(set) var globs: [(pattern: String, mimeType: String)] = []
    private var subclasses: [String: [String]] = [:]
    private var aliases: [String: String] = [:]

    /// The database of this system (`$XDG_DATA_HOME`, then each of `$XDG_DATA_DIRS`), read once.
    static let system = SharedMIMEInfo(directories: ([FilePaths.dataHome] + FilePaths.dataDirectories).map { $0 + "/mime" })

    init(directories: [String]) {
        var best: [String: String] = [:]
        var order: [String] = []
        // A directory earlier in the list wins (the user's over the system's); within one, the
        // highest weight.
        for dir in directories {
            var local: [String: (weight: Int, mime: String)] = [:]
            var localOrder: [String] = []
            // Split as bytes, not Characters: every command's start reads these files, their
            // delimiters are ASCII, and grapheme-aware splitting was a visible part of a start.
            for line in Self.lines(dir + "/globs2") {
                let f = line.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
                guard f.count >= 3, let weight = Int(Self.text(f[0])) else { continue }
                let pattern = f[2]
                let caseSensitive = f.count > 3 && f[3].split(separator: UInt8(ascii: ",")).contains { $0.elementsEqual("cs".utf8) }
                // Only what a dictionary can look up: `*.ext` or a literal name, matched without case.
                let rest = pattern.starts(with: "*.".utf8) ? pattern.dropFirst(2) : pattern
                guard !caseSensitive, !rest.isEmpty, !rest.contains(where: { "*?[]".utf8.contains($0) }) else { continue }
                let key = Self.text(pattern).lowercased()
                if let known = local[key] {
                    if known.weight >= weight { continue }
                } else {
                    localOrder.append(key)
                }
                local[key] = (weight, Self.text(f[1]))
            }
            for key in localOrder where best[key] == nil {
                best[key] = local[key]!.mime
                order.append(key)
            }
            for line in Self.lines(dir + "/subclasses") {
                let f = line.split(separator: UInt8(ascii: " "))
                if f.count == 2 { subclasses[Self.text(f[0]), default: []].append(Self.text(f[1])) }
            }
            for line in Self.lines(dir + "/aliases") {
                let f = line.split(separator: UInt8(ascii: " "))
                if f.count == 2, aliases[Self.text(f[0])] == nil { aliases[Self.text(f[0])] = Self.text(f[1]) }
            }
        }
        globs = order.map { ($0, best[$0]!) }
    }

    private static func lines(_ path: String) -> [ArraySlice<UInt8>] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return [UInt8](data).split(separator: UInt8(ascii: "\n")).filter { $0.first != UInt8(ascii: "#") }
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The canonical name of `mimeType`.
    func canonical(_ mimeType: String) -> String { aliases[mimeType] ?? mimeType }

    /// What `mimeType` is a direct subclass of.
    func parents(of mimeType: String) -> [String] { subclasses[canonical(mimeType)] ?? [] }

    /// `text/*`, or a subclass of `text/plain` at any depth (`application/x-shellscript`).
    func isText(_ mimeType: String) -> Bool {
        var seen: Set<String> = []
        var queue = [canonical(mimeType)]
        while let m = queue.popLast() {
            if m.hasPrefix("text/") { return true }
            if seen.insert(m).inserted { queue += parents(of: m) }
        }
        return false
    }
}
