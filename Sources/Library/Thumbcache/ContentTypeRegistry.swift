import ThumbcacheImaging

#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheSync

/// What is known of a type: its parents, MIME type, filename extensions and magic bytes.
public struct ContentTypeDeclaration: Sendable, Hashable {
    public var type: ContentType
    public var conformsTo: [ContentType]
    public var mimeType: String?
    public var extensions: [String]
    /// Whole file names, lower case, that say the type (`makefile`, `cmakelists.txt`).
    public var filenames: [String] = []
    /// Bytes that identify the type (any one of them), at offsets from the file's start.
    public var magic: [Magic]
    /// A test of the file's first bytes for types fixed offsets cannot tell (SVG); tried before magic.
    package var sniffer: FormatDeclaration.Sniffer?

    public init(_ type: ContentType, conformsTo: [ContentType], mimeType: String? = nil, extensions: [String] = [], magic: [Magic] = []) {
        self.init(type, conformsTo: conformsTo, mimeType: mimeType, extensions: extensions, magic: magic, sniffer: nil)
    }

    package init(_ type: ContentType, conformsTo: [ContentType], mimeType: String?, extensions: [String], magic: [Magic],
                 sniffer: FormatDeclaration.Sniffer?) {
        self.type = type
        self.conformsTo = conformsTo
        self.mimeType = mimeType
        self.extensions = extensions
        self.magic = magic
        self.sniffer = sniffer
    }

    /// The declaration of a catalogued format: its identifier, parents, MIME type, extensions and magic.
    package init(_ format: FormatDeclaration) {
        self.init(format.type, conformsTo: format.conformsTo, mimeType: format.mimeType, extensions: format.extensions,
                  magic: format.magic, sniffer: format.sniffer)
    }
}

/// The known content types: built-ins plus what an app declares.
public struct ContentTypeRegistry: Sendable {
    private(set) var declarations: [ContentType: ContentTypeDeclaration] = [:]
    private var byExtension: [String: ContentType] = [:]
    private var byFilename: [String: ContentType] = [:]
    private var magics: [(magic: Magic, type: ContentType)] = []
    private var sniffers: [(sniffer: FormatDeclaration.Sniffer, type: ContentType)] = []

    /// The built-in types.
    public init() {
        self = Self.standard
    }

    private init(declaring list: [ContentTypeDeclaration]) {
        declare(contentsOf: list)
    }

    /// The built-ins declared once per process (sorting the magic and reading shared-mime-info
    /// is start-up work); every registry starts as a copy. The text types go on top of
    /// ``catalogued``, in the order `builtins` lists them, so the others are declared once.
    private static let standard = {
        var registry = catalogued
        registry.declare(contentsOf: text)
        return registry
    }()

    /// The built-in types but the text ones, which are read from shared-mime-info: a file whose
    /// first bytes name a catalogued format is typed the same by these (its magic decides, and no
    /// text type conforms to a format's), without the database (a one-file call's start).
    package static let catalogued = ContentTypeRegistry(declaring: base)

    static let builtins = base + text
    /// The text types (TextTypes), declared once per process from shared-mime-info.
    static let text = TextTypes.declarations(besides: base)

    /// Every built-in type but the text ones, which are declared around these: the tree's inner
    /// nodes and the archive formats, then every catalogued format (``FormatCatalogue``) but
    /// text, whose types come from shared-mime-info (TextTypes).
    static let base: [ContentTypeDeclaration] = [
        .init(.content, conformsTo: [.item]),
        .init(.data, conformsTo: [.item], mimeType: "application/octet-stream"),
        .init(.folder, conformsTo: [.item], mimeType: "inode/directory"),
        .init(.image, conformsTo: [.data, .content]),
        .init(.heif, conformsTo: [.image], mimeType: "image/heif"),
        .init(.cameraRawImage, conformsTo: [.image]),
        .init(.text, conformsTo: [.data, .content]),
        .init(.compositeContent, conformsTo: [.content]),
        .init(.audiovisualContent, conformsTo: [.data, .content]),
        .init(.audio, conformsTo: [.audiovisualContent]),
        .init(.movie, conformsTo: [.audiovisualContent]),
        .init(.font, conformsTo: [.data, .content]),
        .init(.archive, conformsTo: [.data]),
        .init(.zip, conformsTo: [.archive], mimeType: "application/zip", extensions: ["zip"], magic: [Magic([0x50, 0x4B, 0x03, 0x04])]),
        .init(.rar, conformsTo: [.archive], mimeType: "application/vnd.rar", extensions: ["rar"], magic: [Magic("Rar!\u{1A}\u{07}")]),
        .init(.sevenZip, conformsTo: [.archive], mimeType: "application/x-7z-compressed", extensions: ["7z"],
              magic: [Magic([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C])]),
        .init(.tar, conformsTo: [.archive], mimeType: "application/x-tar", extensions: ["tar"], magic: [Magic("ustar", at: 257)]),
    ] + FormatCatalogue.all.filter { $0.kind != .text }.map(ContentTypeDeclaration.init)

    /// Adds (or replaces) a type.
    public mutating func declare(_ d: ContentTypeDeclaration) {
        declare(contentsOf: [d])
    }

    /// Adds (or replaces) each type in turn, as ``declare(_:)`` would, the magic sorted once at
    /// the end: sorted at each of the hundreds declared at a start, it was a third of a one-file
    /// call's path to its worker's request (PERFORMANCE.md). A stable sort keeps the same order.
    mutating func declare(contentsOf list: [ContentTypeDeclaration]) {
        var added = false
        for d in list { added = add(d) || added }
        if added { magics.sort { $0.magic.weight > $1.magic.weight } }  // the most specific match first (stable)
    }

    /// Adds or replaces `d`, the magic left unsorted; whether it has any.
    private mutating func add(_ d: ContentTypeDeclaration) -> Bool {
        // A first declaration (the usual case: hundreds at each start) has nothing to replace.
        let replacing = declarations.updateValue(d, forKey: d.type) != nil
        for e in d.extensions { byExtension[e.lowercased()] = d.type }
        for n in d.filenames { byFilename[n.lowercased()] = d.type }
        if replacing {
            magics.removeAll { $0.type == d.type }
            sniffers.removeAll { $0.type == d.type }
        }
        magics += d.magic.map { ($0, d.type) }
        if let sniffer = d.sniffer { sniffers.append((sniffer, d.type)) }
        return !d.magic.isEmpty
    }

    public func declaration(of type: ContentType) -> ContentTypeDeclaration? { declarations[type] }

    /// Whether `type` is declared here.
    package func declares(_ type: ContentType) -> Bool { declarations[type] != nil }

    /// A fingerprint of everything detection goes by (each type's identifier, parents, MIME type,
    /// extensions, names, magic and sniffer), and thumbcache's version: a type detected under
    /// another stamp is detected again.
    package var stamp: UInt32 {
        // The fields as bytes, ended by bytes UTF-8 never holds (0xFF a text, 0xFE a list, 0xFD a
        // magic) and with the magic's lengths spelled out: printing the arrays instead, as a
        // description, took longer than the rest of a warm's start.
        var bytes = Array(thumbcacheVersion.utf8)
        func add(_ text: String) {
            bytes += text.utf8
            bytes.append(0xFF)
        }
        func add(_ number: Int) { withUnsafeBytes(of: Int64(number).littleEndian) { bytes += $0 } }
        for (type, d) in declarations.sorted(by: { $0.key.identifier < $1.key.identifier }) {
            add(type.identifier)
            for parent in d.conformsTo { add(parent.identifier) }
            bytes.append(0xFE)
            add(d.mimeType ?? "")
            for e in d.extensions { add(e) }
            bytes.append(0xFE)
            for n in d.filenames { add(n) }
            bytes.append(0xFE)
            for m in d.magic {
                for part in m.parts {
                    add(part.offset)
                    add(part.bytes.count)
                    bytes += part.bytes
                }
                bytes.append(0xFD)
            }
            bytes.append(0xFE)
            add(d.sniffer?.name ?? "")
        }
        return UInt32(truncatingIfNeeded: ContentHash.of(bytes).low)
    }

    /// True if `type` is `other` or descends from it.
    public func conforms(_ type: ContentType, to other: ContentType) -> Bool {
        if type == other { return true }
        // Most answers are a parent or a grandparent away: found without allocating (a warm asks
        // for every file it walks).
        let parents = declarations[type]?.conformsTo ?? []
        if parents.contains(other) { return true }
        for parent in parents where declarations[parent]?.conformsTo.contains(other) == true { return true }
        var seen: Set<ContentType> = [type]
        var queue = declarations[type]?.conformsTo ?? []
        while let next = queue.popLast() {
            if next == other { return true }
            if seen.insert(next).inserted { queue += declarations[next]?.conformsTo ?? [] }
        }
        return false
    }

    /// `type` and every type it conforms to, nearest first (`kMDItemContentTypeTree`).
    public func tree(of type: ContentType) -> [ContentType] {
        var out: [ContentType] = []
        var queue = [type]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            if out.contains(next) { continue }
            out.append(next)
            queue += declarations[next]?.conformsTo ?? []
        }
        return out
    }

    public func mimeType(of type: ContentType) -> String? { declarations[type]?.mimeType }

    /// The type of a file: by its first bytes, then by its name (a whole name shared-mime-info
    /// knows, such as `Makefile`, or its extension), then plain text if the bytes read as UTF-8
    /// text, else `public.data`.
    public func type(of head: [UInt8], name: String) -> ContentType {
        head.withUnsafeBytes { type(ofHead: $0, name: name) }
    }

    /// ``type(of:name:)`` on bytes in place: what ``type(ofFileAt:)`` calls with the 4 KiB it read
    /// into a stack buffer (it runs on every file a warm walks, cached or not).
    package func type(ofHead head: UnsafeRawBufferPointer, name: String) -> ContentType {
        func passes(_ sniffer: FormatDeclaration.Sniffer) -> Bool { sniffer.test(UnsafeRawBufferPointer(rebasing: head.prefix(sniffer.span))) }
        for (sniffer, type) in sniffers where !sniffer.needsExtension && passes(sniffer) { return type }
        // Looked up only when the bytes leave the question open.
        lazy var named = type(forFilename: name)
        for (magic, type) in magics where magic.matches(head) {
            // A name that says a kind of what the bytes are (a `.cbz` is a ZIP) says more.
            if let named, named != type, conforms(named, to: type), declarations[named]?.sniffer.map(passes) ?? true { return named }
            return type
        }
        if let named, let d = declarations[named] {
            // A format without a signature: its name and a plausible header together (TGA, text).
            if let sniffer = d.sniffer, sniffer.needsExtension, passes(sniffer) { return named }
            // A name alone is trusted only for a type with no magic or sniffer of its own: a name
            // that says "image" over bytes that are not one leaves the bytes to decide.
            if d.magic.isEmpty && d.sniffer == nil { return named }
        }
        // A name that says nothing: UTF-8 (or UTF-16 with its mark) that reads as text is plain
        // text; 8-bit text needs a name that says so.
        return TextSniffer.looksLikeText(head, latin1: false) ? .plainText : .data
    }

    /// The type a file name's extension names, if known (`photo.JPG` → `public.jpeg`).
    public func type(forFilename name: String) -> ContentType? {
        if let type = byFilename[name.lowercased()] { return type }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return byExtension[name[name.index(after: dot)...].lowercased()]
    }

    /// The type of the file at `path` (reads at most 4 KiB: SVG's root element and a raw file's
    /// first IFD may lie past the first 512 bytes).
    public func type(ofFileAt path: some FileLocation) -> ContentType {
        let path = path.fileSystemPath
        guard case .success(let fd) = retryingInterrupts({ open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }) else { return .data }
        defer { close(fd) }
        let name = FilePaths.lastComponent(path)
        // A stack buffer, not zeroed: only the bytes read are looked at.
        return withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 16) { buffer in
            let n = (try? retryingInterrupts { read(fd, buffer.baseAddress, buffer.count) }.get()) ?? 0
            return type(ofHead: UnsafeRawBufferPointer(rebasing: buffer[..<max(0, n)]), name: name)
        }
    }
}
