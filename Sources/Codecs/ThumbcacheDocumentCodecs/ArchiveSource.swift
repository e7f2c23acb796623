import CThumbcacheArchive
import ThumbcacheCodecSupport
import ThumbcacheImaging

/// A document or comic that is an archive, through libarchive from the worker's mapping: the
/// picture it carries (an office suite's stored thumbnail, an e-book's cover, a comic's page,
/// the first unless another is asked) decoded in place by the PNG/JPEG path, and its title and authors. Entries are read by
/// name into memory under caps, never onto a disk: a zip bomb stops at the cap, a `../` name is
/// just a name. Without a picture the header is 0 × 0 (the type's icon, like audio without a cover).
final class ArchiveSource: RowSource {
    /// The most an entry may decompress to: a picture, or an XML part.
    static let pictureCap = 64 << 20
    static let xmlCap = 4 << 20
    /// Entries listed at most (a comic's pages).
    static let maxEntries = 100_000

    private let file: MappedFile
    private let path: String
    private var picture: (bytes: UnsafeMutableRawBufferPointer, source: any RowSource)?
    let header: RowSourceHeader

    /// The comic formats: their pages are their pictures, in natural order of their names.
    static let comics: Set<ImageFormat> = [.comicZIP, .comicRAR, .comic7Zip, .comicTar]

    init(descriptor: Int32, name: String, format: ImageFormat, page: Int = 0) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        var media = MediaMetadata()
        let entry: String?
        switch format {
        case .epub:
            let (cover, meta) = try Self.epub(file.bytes, name: name)
            entry = cover
            (media.title, media.authors) = meta
        case .wordDocument, .spreadsheet, .presentation:
            let names = try Self.list(file.bytes, name: name)
            entry = names.first { $0.hasPrefix("docProps/thumbnail.") }
            let core = try Self.xml(file.bytes, "docProps/core.xml", name: name)
            media.title = core?.text("title")
            media.authors = core?.text("creator").map { [$0] }
        case .comicZIP, .comicRAR, .comic7Zip, .comicTar:
            let pages = try Self.pages(Self.list(file.bytes, name: name))
            media.pageCount = pages.count
            guard page < max(1, pages.count) else { throw ImagingError(path: name, reason: .noSuchPage(page: page + 1, pages: pages.count)) }
            entry = pages.isEmpty ? nil : pages[page]
        default:  // OpenDocument
            entry = "Thumbnails/thumbnail.png"
            let meta = try Self.xml(file.bytes, "meta.xml", name: name)
            media.title = meta?.text("title")
            media.authors = (meta?.text("initial-creator") ?? meta?.text("creator")).map { [$0] }
        }
        if let entry, let bytes = try Self.read(file.bytes, entry, cap: Self.pictureCap, name: name) {
            do {
                let source = try ImageDecoders.picture(memory: UnsafeRawBufferPointer(bytes), name: "\(name) (\(entry))")
                picture = (bytes, source)
                var h = source.header
                h.media = media
                header = h
            } catch {
                carchive_free(bytes.baseAddress)
                throw error
            }
        } else {
            header = RowSourceHeader(width: 0, height: 0, hasAlpha: false, media: media)
        }
    }

    deinit {
        if let picture { carchive_free(picture.bytes.baseAddress) }
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        guard let picture else { throw ImagingError(path: path, reason: .noPicture("no thumbnail, cover or page stored in it")) }
        return try picture.source.start(shrink: shrink, fast: fast)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        try picture?.source.readRows(sink)
    }

    // MARK: Entries

    /// The archive's regular files, in archive order.
    static func list(_ archive: UnsafeRawBufferPointer, name: String) throws(ImagingError) -> [String] {
        var names: UnsafeMutablePointer<CChar>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let count = carchive_list(archive.baseAddress?.assumingMemoryBound(to: UInt8.self), archive.count, Int32(maxEntries), &names, &length,
                                  &message, message.count)
        guard count >= 0, let names else { throw ImagingError(path: name, reason: .corrupt(cText(message))) }
        defer { carchive_free(names) }
        return UnsafeRawBufferPointer(start: names, count: length).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The entry named `entry`, whole, or nil if there is none; larger than `cap`: an error.
    static func read(_ archive: UnsafeRawBufferPointer, _ entry: String, cap: Int, name: String) throws(ImagingError) -> UnsafeMutableRawBufferPointer? {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = carchive_read(archive.baseAddress?.assumingMemoryBound(to: UInt8.self), archive.count, entry, cap, &data, &length,
                                   &message, message.count)
        switch status {
        case 0: return UnsafeMutableRawBufferPointer(start: data, count: length)
        case 1: return nil
        case 2: throw ImagingError(path: name, reason: .corrupt("\(entry) holds more than the \(cap >> 20) MiB an entry may have"))
        default: throw ImagingError(path: name, reason: .corrupt(cText(message)))
        }
    }

    /// An XML entry, scanned; nil if there is none.
    static func xml(_ archive: UnsafeRawBufferPointer, _ entry: String, name: String) throws(ImagingError) -> XMLScan? {
        guard let bytes = try read(archive, entry, cap: xmlCap, name: name) else { return nil }
        defer { carchive_free(bytes.baseAddress) }
        return XMLScan(String(decoding: bytes, as: UTF8.self))
    }

    // MARK: Comics

    /// The images in natural order (`page2` before `page10`), among names that are plain relative
    /// paths: no `..`, no hidden or `__MACOSX` parts (`./` is fine).
    static func pages(_ names: [String]) -> [String] {
        names.filter { n in
            let parts = n.split(separator: "/").filter { $0 != "." }
            guard !n.hasPrefix("/"), !parts.contains(where: { $0.hasPrefix(".") || $0 == "__MACOSX" }) else { return false }
            return ["jpg", "jpeg", "png"].contains(n.split(separator: ".").last?.lowercased() ?? "")
        }.sorted { naturalOrder($0, $1) }
    }

    /// Names compared with runs of ASCII digits as numbers (of any length), letters without case.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        let x = Array(a.lowercased().utf8), y = Array(b.lowercased().utf8)
        func digit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
        var i = 0, j = 0
        while i < x.count, j < y.count {
            if digit(x[i]), digit(y[j]) {
                let si = i, sj = j
                while i < x.count, digit(x[i]) { i += 1 }
                while j < y.count, digit(y[j]) { j += 1 }
                let n = x[si..<i].drop { $0 == 48 }, m = y[sj..<j].drop { $0 == 48 }
                if n.count != m.count { return n.count < m.count }
                if !n.elementsEqual(m) { return n.lexicographicallyPrecedes(m) }
                continue
            }
            if x[i] != y[j] { return x[i] < y[j] }
            i += 1
            j += 1
        }
        return i == x.count && j < y.count
    }

    // MARK: EPUB

    /// The cover's entry (the OPF's `cover-image` item, its `<meta name="cover">`, or an image item
    /// called cover) and the title and authors, from the package document `container.xml` names.
    static func epub(_ archive: UnsafeRawBufferPointer, name: String) throws(ImagingError) -> (String?, (String?, [String]?)) {
        guard let container = try xml(archive, "META-INF/container.xml", name: name),
              let opfPath = container.all("rootfile").compactMap({ $0.attributes["full-path"] }).first,
              let opf = try xml(archive, opfPath, name: name)
        else { throw ImagingError(path: name, reason: .corrupt("an EPUB without a package document (META-INF/container.xml)")) }
        let title = opf.text("title")
        let authors = opf.all("creator").map(\.text).filter { !$0.isEmpty }
        let items = opf.all("item").filter { $0.attributes["media-type"]?.hasPrefix("image/") ?? false }
        let coverID = opf.all("meta").first { $0.attributes["name"] == "cover" }?.attributes["content"]
        let cover = items.first { ($0.attributes["properties"] ?? "").split(separator: " ").contains("cover-image") }
            ?? items.first { coverID != nil && $0.attributes["id"] == coverID }
            ?? items.first { ($0.attributes["id"] ?? "").lowercased().contains("cover") || ($0.attributes["href"] ?? "").lowercased().contains("cover") }
        let entry = cover?.attributes["href"].map { resolve($0, against: opfPath) }
        return (entry, (title, authors.isEmpty ? nil : authors))
    }

    /// `href` (percent-encoded, relative to the package document) as an entry name.
    static func resolve(_ href: String, against base: String) -> String {
        var parts = base.split(separator: "/").dropLast().map(String.init)
        for part in percentDecoded(href.split(separator: "#").first.map(String.init) ?? href).split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }

    static func percentDecoded(_ s: String) -> String {
        guard s.contains("%") else { return s }
        var bytes: [UInt8] = []
        var u = Array(s.utf8)[...]
        while let c = u.first {
            if c == UInt8(ascii: "%"), u.count >= 3, let v = UInt8(String(decoding: u.dropFirst().prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(v)
                u = u.dropFirst(3)
            } else {
                bytes.append(c)
                u = u.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
