#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheSync

/// A still photo with its movie appended to the same file: Google's Motion Photo (XMP
/// `Camera:MotionPhoto` and a `Container:Directory` whose `MotionPhoto` item gives the movie's
/// length) or its earlier form (`GCamera:MicroVideo`, `MicroVideoOffset` bytes from the end).
/// What the XMP claims is believed only if the bytes there start an MP4 (`ftyp`), as the
/// format's readers are told to check: a file cut after its XMP claims no movie. Without XMP, a
/// Samsung phone's trailer (SEF: records, their directory `SEFH` and the footer `SEFT` at the
/// file's end) may hold the movie as its `MotionPhoto_Data` record, read from the tail alone.
package struct MotionPhoto: Sendable, Hashable, Codable {
    /// Where the movie starts in the file, and its length (to the file's end).
    package var videoOffset: Int
    package var videoLength: Int
    /// The movie's time that the still shows, in seconds, when the XMP says.
    package var presentationSeconds: Double?
    /// The movie's length in seconds, from its `mvhd` box.
    package var videoDurationSeconds: Double?
    /// Bytes read to find and check the movie (box headers at the file's tail; never the movie).
    package var bytesRead: Int

    /// What an XMP packet claims: the movie's length from the file's end, and the presentation
    /// time in microseconds; nil when it claims no movie.
    static func claim(xmp: UnsafeRawBufferPointer) -> (length: Int, presentationMicroseconds: Int64?)? {
        let text = Array(xmp)
        func value(_ local: String) -> String? { XMPText.value(local, in: text[...]) }
        if value("MotionPhoto") == "1" {
            // The directory's item whose semantic is MotionPhoto (the last item: the movie).
            let length = XMPText.elements(in: text).lazy.compactMap { element -> Int? in
                guard XMPText.value("Semantic", in: element) == "MotionPhoto" else { return nil }
                return XMPText.value("Length", in: element).flatMap { Int($0) }
            }.first
            guard let length, length > 0 else { return nil }
            return (length, value("MotionPhotoPresentationTimestampUs").flatMap { Int64($0) })
        }
        if value("MicroVideo") == "1", let offset = value("MicroVideoOffset").flatMap({ Int($0) }), offset > 0 {
            return (offset, value("MicroVideoPresentationTimestampUs").flatMap { Int64($0) })
        }
        return nil
    }

    /// The movie the XMP packet (if any) claims in the file on `descriptor`, else one a Samsung
    /// trailer holds, checked against the bytes; nil when there is none.
    package static func find(xmp: UnsafeRawBufferPointer?, descriptor: Int32) -> MotionPhoto? {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { return nil }
        return find(xmp: xmp, in: TailReader(end: Int(st.st_size)) { buffer, offset in
            guard case .success(let n) = retryingInterrupts({ pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }) else { return 0 }
            return n
        })
    }

    /// The same for a file already mapped (a HEIF's, which its decoder maps whole): only the
    /// headers it reads are touched.
    package static func find(xmp: UnsafeRawBufferPointer?, mapped file: UnsafeRawBufferPointer) -> MotionPhoto? {
        find(xmp: xmp, in: TailReader(end: file.count) { buffer, offset in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: file[offset..<offset + buffer.count]))
            return buffer.count
        })
    }

    private static func find(xmp: UnsafeRawBufferPointer?, in reader: TailReader) -> MotionPhoto? {
        var reader = reader
        if let xmp, let claim = claim(xmp: xmp) {
            guard claim.length < reader.end else { return nil }
            var found = MotionPhoto(videoOffset: reader.end - claim.length, videoLength: claim.length, bytesRead: 0)
            if let us = claim.presentationMicroseconds, us >= 0 { found.presentationSeconds = Double(us) / 1e6 }
            return checked(found, &reader)
        }
        guard let (start, length) = samsungMovie(&reader) else { return nil }
        return checked(MotionPhoto(videoOffset: start, videoLength: length, bytesRead: 0), &reader)
    }

    /// `found` if its bytes start an MP4, with the movie's duration and the bytes read.
    private static func checked(_ found: MotionPhoto, _ reader: inout TailReader) -> MotionPhoto? {
        var found = found
        let end = found.videoOffset + found.videoLength
        guard let first = reader.box(at: found.videoOffset, within: end), first.type == "ftyp" else { return nil }
        found.videoDurationSeconds = reader.duration(from: found.videoOffset, to: end)
        found.bytesRead = reader.bytesRead
        return found
    }

    /// The record type of a Samsung trailer's movie, and its name.
    static let samsungMovieType: UInt16 = 0x0A30
    static let samsungMovieName = Array("MotionPhoto_Data".utf8)

    /// Where a Samsung trailer's `MotionPhoto_Data` record keeps its movie: the footer (the
    /// directory's length, little-endian, then `SEFT`) gives the directory (`SEFH`, a version, a
    /// count, then per record: 2 bytes, its type, its distance back from the directory, its
    /// length); the record starts with 2 bytes, its type, its name's length and its name.
    private static func samsungMovie(_ reader: inout TailReader) -> (start: Int, length: Int)? {
        guard let footer = reader.read(8, at: reader.end - 8), footer[4..<8].elementsEqual("SEFT".utf8) else { return nil }
        let size = Int(le32(footer, 0))
        let directory = reader.end - 8 - size
        guard size >= 12, size <= 1 << 16, directory > 0, let head = reader.read(12, at: directory), head[0..<4].elementsEqual("SEFH".utf8) else {
            return nil
        }
        let count = Int(le32(head, 8))
        guard count > 0, 12 + count * 12 <= size, let entries = reader.read(count * 12, at: directory + 12) else { return nil }
        for i in 0..<count {
            let e = i * 12
            guard UInt16(entries[e + 2]) | UInt16(entries[e + 3]) << 8 == samsungMovieType else { continue }
            let (back, length) = (Int(le32(entries, e + 4)), Int(le32(entries, e + 8)))
            let record = directory - back
            let headerLength = 8 + samsungMovieName.count
            guard back > 0, record >= 0, length > headerLength, record + length <= directory,
                  let header = reader.read(headerLength, at: record), Int(le32(header, 4)) == samsungMovieName.count,
                  header[8...].elementsEqual(samsungMovieName)
            else { return nil }
            return (record + headerLength, length - headerLength)
        }
        return nil
    }

    private static func le32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
}

/// Reads MP4 box headers at the end of a file (by `pread`, or from a mapping), counting the bytes.
private struct TailReader {
    let end: Int
    /// Fills the buffer from the file at the offset (within `end`); how many bytes came.
    let fill: (UnsafeMutableRawBufferPointer, Int) -> Int
    private(set) var bytesRead = 0

    init(end: Int, fill: @escaping (UnsafeMutableRawBufferPointer, Int) -> Int) {
        self.end = end
        self.fill = fill
    }

    mutating func read(_ count: Int, at offset: Int) -> [UInt8]? {
        guard offset >= 0, count > 0, offset + count <= end else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { fill($0, offset) }
        guard n == count else { return nil }
        bytesRead += n
        return bytes
    }

    /// The box at `offset`: its type, where its contents start and where it ends.
    mutating func box(at offset: Int, within limit: Int? = nil) -> (type: String, contents: Int, end: Int)? {
        let limit = limit ?? end
        guard let head = read(8, at: offset) else { return nil }
        var size = Int(be32(head, 0))
        let type = String(decoding: head[4..<8], as: UTF8.self)
        var contents = offset + 8
        if size == 1 {
            guard let large = read(8, at: offset + 8) else { return nil }
            size = Int(clamping: UInt64(be32(large, 0)) << 32 | UInt64(be32(large, 4)))
            contents += 8
        } else if size == 0 {
            size = limit - offset  // to the end
        }
        guard size >= contents - offset, offset + size <= limit else { return nil }
        return (type, contents, offset + size)
    }

    /// The movie's duration from `moov`/`mvhd`, reading only box headers on the way.
    mutating func duration(from start: Int, to end: Int) -> Double? {
        var offset = start
        while let box = box(at: offset, within: end) {
            if box.type == "moov" {
                var inner = box.contents
                while let child = self.box(at: inner, within: box.end) {
                    if child.type == "mvhd" { return mvhd(at: child.contents) }
                    inner = child.end
                }
                return nil
            }
            offset = box.end
        }
        return nil
    }

    private mutating func mvhd(at offset: Int) -> Double? {
        guard let version = read(1, at: offset)?.first else { return nil }
        // Version 1: 64-bit creation and modification times and duration.
        let (at, wide) = version == 1 ? (offset + 20, true) : (offset + 12, false)
        guard let b = read(wide ? 12 : 8, at: at) else { return nil }
        let timescale = be32(b, 0)
        let duration = wide ? UInt64(be32(b, 4)) << 32 | UInt64(be32(b, 8)) : UInt64(be32(b, 4))
        guard timescale > 0, duration != UInt64.max, duration != UInt64(UInt32.max) else { return nil }
        return Double(duration) / Double(timescale)
    }

    private func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
}

/// Just enough of XMP's RDF/XML to read a few properties by local name, whatever their
/// prefix, written as attributes (`Camera:MotionPhoto="1"`) or as elements
/// (`<Camera:MotionPhoto>1</Camera:MotionPhoto>`).
enum XMPText {
    /// The value of the first property named `local` (with any prefix) in `utf8`.
    static func value(_ local: String, in utf8: ArraySlice<UInt8>) -> String? {
        let name = Array((":" + local).utf8)
        var i = utf8.startIndex
        while let at = find(name, in: utf8, from: i) {
            i = at + name.count
            guard i < utf8.endIndex else { return nil }
            var j = i
            while j < utf8.endIndex, utf8[j] == 0x20 || utf8[j] == 0x0A || utf8[j] == 0x0D || utf8[j] == 0x09 { j += 1 }
            if j < utf8.endIndex, utf8[j] == 0x3D {  // ="value" or ='value'
                j += 1
                while j < utf8.endIndex, utf8[j] == 0x20 { j += 1 }
                guard j < utf8.endIndex, utf8[j] == 0x22 || utf8[j] == 0x27 else { continue }
                let quote = utf8[j]
                guard let close = utf8[(j + 1)...].firstIndex(of: quote) else { return nil }
                return String(decoding: utf8[(j + 1)..<close], as: UTF8.self)
            }
            if i < utf8.endIndex, utf8[i] == 0x3E, at > utf8.startIndex, utf8[..<at].last(where: { $0 == 0x3C || $0 == 0x2F || $0 == 0x20 }) != 0x2F {
                // <prefix:Local>value</…
                guard let close = utf8[(i + 1)...].firstIndex(of: 0x3C) else { return nil }
                let inner = utf8[(i + 1)..<close]
                guard let first = inner.firstIndex(where: { $0 > 0x20 }), let last = inner.lastIndex(where: { $0 > 0x20 }) else { return "" }
                return String(decoding: utf8[first...last], as: UTF8.self)
            }
        }
        return nil
    }

    /// Each start tag of `utf8` with its attributes (`<… … …>`), in order.
    static func elements(in utf8: [UInt8]) -> [ArraySlice<UInt8>] {
        utf8.split(separator: 0x3C).map { $0.prefix { $0 != 0x3E } }
    }

    private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>, from start: Int) -> Int? {
        var i = start
        while i + needle.count <= haystack.endIndex {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
