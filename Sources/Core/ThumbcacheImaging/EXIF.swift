/// Fields read from an EXIF block (a TIFF structure), bounds-checked against malformed offsets,
/// IFD loops and huge counts.
///
/// A small Swift reader rather than libexif: thumbcache needs a dozen tags, the reader must never
/// trust an offset, and it runs on every image, so it reads the TIFF structure in place with no
/// allocation beyond the strings it returns (see Docs/IMAGING.md).
package struct EXIFData: Sendable, Hashable, Codable {
    /// 1…8 as in TIFF/EXIF; nil when absent or out of range.
    package var orientation: Int?
    package var make: String?
    package var model: String?
    package var artist: String?
    package var imageDescription: String?
    /// "YYYY:MM:DD HH:MM:SS" as written by the camera.
    package var dateTimeOriginal: String?
    /// "+HH:MM", the offset of ``dateTimeOriginal`` from UTC, if recorded.
    package var offsetTimeOriginal: String?
    /// Seconds.
    package var exposureTime: Double?
    package var fNumber: Double?
    package var isoSpeed: Int?
    /// Millimetres.
    package var focalLength: Double?
    /// The lens's model name (LensModel), as the camera wrote it.
    package var lensModel: String?
    /// Degrees, north positive.
    package var latitude: Double?
    /// Degrees, east positive.
    package var longitude: Double?
    /// Metres above sea level (negative below).
    package var altitude: Double?
    package var pixelWidth: Int?
    package var pixelHeight: Int?
    /// Where the embedded (IFD1) JPEG thumbnail lies inside the EXIF block.
    package var thumbnailRange: Range<Int>?
    /// The Live Photo identifier an iPhone writes in its MakerNote (tag 0x0011 of "Apple iOS"),
    /// which the movie of the pair carries too.
    package var contentIdentifier: String?

    package init() {}

    /// Parses an EXIF block (starting at the TIFF header "II*\0" or "MM\0*"); nil if it is not one.
    package static func parse(_ data: UnsafeRawBufferPointer) -> EXIFData? {
        var reader = TIFFReader(data: data)
        guard let ifd0 = reader.start() else { return nil }
        var exif = EXIFData()
        var visited: Set<Int> = []
        var ifd1: Int?
        var exifIFD: Int?
        var gpsIFD: Int?
        reader.readIFD(at: ifd0, visited: &visited) { tag, entry in
            switch tag {
            case 0x0112: exif.orientation = reader.integer(entry).flatMap { (1...8).contains($0) ? $0 : nil }
            case 0x010F: exif.make = reader.string(entry)
            case 0x0110: exif.model = reader.string(entry)
            case 0x013B: exif.artist = reader.string(entry)
            case 0x010E: exif.imageDescription = reader.string(entry)
            case 0x8769: exifIFD = reader.integer(entry)
            case 0x8825: gpsIFD = reader.integer(entry)
            default: break
            }
        } next: { ifd1 = $0 }
        if let exifIFD {
            reader.readIFD(at: exifIFD, visited: &visited) { tag, entry in
                switch tag {
                case 0x9003: exif.dateTimeOriginal = reader.string(entry)
                case 0x9011: exif.offsetTimeOriginal = reader.string(entry)
                case 0x829A: exif.exposureTime = reader.rational(entry)
                case 0x829D: exif.fNumber = reader.rational(entry)
                case 0x8827: exif.isoSpeed = reader.integer(entry)
                case 0x920A: exif.focalLength = reader.rational(entry)
                case 0xA434: exif.lensModel = reader.string(entry)
                case 0xA002: exif.pixelWidth = reader.integer(entry)
                case 0xA003: exif.pixelHeight = reader.integer(entry)
                case 0x927C: exif.contentIdentifier = reader.appleContentIdentifier(entry)
                default: break
                }
            }
        }
        if let gpsIFD {
            var latRef: String?, lonRef: String?, altRef: Int?
            var lat: Double?, lon: Double?, alt: Double?
            reader.readIFD(at: gpsIFD, visited: &visited) { tag, entry in
                switch tag {
                case 0x0001: latRef = reader.string(entry)
                case 0x0002: lat = reader.degrees(entry)
                case 0x0003: lonRef = reader.string(entry)
                case 0x0004: lon = reader.degrees(entry)
                case 0x0005: altRef = reader.integer(entry)
                case 0x0006: alt = reader.rational(entry)
                default: break
                }
            }
            if let lat { exif.latitude = latRef == "S" ? -lat : lat }
            if let lon { exif.longitude = lonRef == "W" ? -lon : lon }
            if let alt { exif.altitude = altRef == 1 ? -alt : alt }
        }
        if let ifd1 {
            var offset: Int?, length: Int?
            reader.readIFD(at: ifd1, visited: &visited) { tag, entry in
                if tag == 0x0201 { offset = reader.integer(entry) }
                if tag == 0x0202 { length = reader.integer(entry) }
            }
            if let offset, let length, length > 0, offset >= 0, offset <= data.count, length <= data.count - offset {
                exif.thumbnailRange = offset..<offset + length
            }
        }
        return exif
    }
}

/// Reads a TIFF structure in place. Every offset and count is checked against the data.
struct TIFFReader {
    struct Entry {
        var type: Int
        var count: Int
        /// Offset of the value: inside the entry when it fits in 4 bytes, else where it points.
        var valueOffset: Int
    }

    let data: UnsafeRawBufferPointer
    var bigEndian = false
    static let maxEntries = 512
    static let maxStringLength = 4096

    init(data: UnsafeRawBufferPointer) { self.data = data }

    mutating func start() -> Int? {
        guard data.count >= 8 else { return nil }
        if data[0] == 0x49 && data[1] == 0x49 {
            bigEndian = false
        } else if data[0] == 0x4D && data[1] == 0x4D {
            bigEndian = true
        } else {
            return nil
        }
        guard u16(2) == 42, let first = u32(4) else { return nil }
        return Int(first)
    }

    func u16(_ offset: Int) -> UInt16? {
        guard offset >= 0, offset <= data.count - 2 else { return nil }
        let v = data.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
        return bigEndian ? UInt16(bigEndian: v) : UInt16(littleEndian: v)
    }

    func u32(_ offset: Int) -> UInt32? {
        guard offset >= 0, offset <= data.count - 4 else { return nil }
        let v = data.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        return bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
    }

    static func typeSize(_ type: Int) -> Int? {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11: 4
        case 5, 10, 12: 8
        default: nil
        }
    }

    /// Visits the entries of the IFD at `offset` (unless visited before: loops end), then reports
    /// the next IFD's offset.
    func readIFD(at offset: Int, visited: inout Set<Int>, _ visit: (Int, Entry) -> Void, next: ((Int) -> Void)? = nil) {
        guard offset >= 8, visited.insert(offset).inserted, let count = u16(offset) else { return }
        let n = min(Int(count), Self.maxEntries)
        guard offset + 2 + n * 12 <= data.count else { return }
        for i in 0..<n {
            let e = offset + 2 + i * 12
            guard let tag = u16(e), let type = u16(e + 2), let count = u32(e + 4),
                let size = Self.typeSize(Int(type)) else { continue }
            let total = Int(count).multipliedReportingOverflow(by: size)
            guard !total.overflow else { continue }
            let valueOffset: Int
            if total.partialValue <= 4 {
                valueOffset = e + 8
            } else {
                guard let pointer = u32(e + 8), Int(pointer) <= data.count - total.partialValue else { continue }
                valueOffset = Int(pointer)
            }
            visit(Int(tag), Entry(type: Int(type), count: Int(count), valueOffset: valueOffset))
        }
        if let next, let following = u32(offset + 2 + n * 12), following != 0 { next(Int(following)) }
    }

    func integer(_ e: Entry) -> Int? {
        guard e.count >= 1 else { return nil }
        switch e.type {
        case 1, 7: return e.valueOffset < data.count ? Int(data[e.valueOffset]) : nil
        case 3: return u16(e.valueOffset).map(Int.init)
        case 4: return u32(e.valueOffset).map(Int.init)
        case 9: return u32(e.valueOffset).map { Int(Int32(bitPattern: $0)) }
        default: return nil
        }
    }

    func rational(_ e: Entry, index: Int = 0) -> Double? {
        guard e.type == 5 || e.type == 10, index < e.count else { return nil }
        let o = e.valueOffset + index * 8
        guard let n = u32(o), let d = u32(o + 4), d != 0 else { return nil }
        return e.type == 5 ? Double(n) / Double(d) : Double(Int32(bitPattern: n)) / Double(Int32(bitPattern: d))
    }

    /// Degrees from three rationals (degrees, minutes, seconds).
    func degrees(_ e: Entry) -> Double? {
        guard e.count >= 3, let d = rational(e, index: 0), let m = rational(e, index: 1), let s = rational(e, index: 2) else {
            return nil
        }
        return d + m / 60 + s / 3600
    }

    /// Tag 0x0011 of an Apple MakerNote: "Apple iOS\0", a version (2 bytes), the byte order
    /// ("MM"), then an IFD whose offsets count from the MakerNote's start.
    func appleContentIdentifier(_ e: Entry) -> String? {
        let prefix = Array("Apple iOS\0".utf8)
        guard e.type == 7, e.count >= 16, e.valueOffset >= 0, e.valueOffset <= data.count - e.count,
              data[e.valueOffset..<(e.valueOffset + prefix.count)].elementsEqual(prefix) else { return nil }
        let note = UnsafeRawBufferPointer(rebasing: data[e.valueOffset..<(e.valueOffset + e.count)])
        var inner = TIFFReader(data: note)
        guard note[12] == 0x4D || note[12] == 0x49, note[12] == note[13] else { return nil }
        inner.bigEndian = note[12] == 0x4D
        var found: String?
        var visited: Set<Int> = []
        inner.readIFD(at: 14, visited: &visited) { tag, entry in
            if tag == 0x0011 { found = inner.string(entry) }
        }
        return found
    }

    func string(_ e: Entry) -> String? {
        guard e.type == 2 || e.type == 7, e.count > 0 else { return nil }
        let length = min(e.count, Self.maxStringLength)
        guard e.valueOffset >= 0, e.valueOffset <= data.count - length else { return nil }
        var bytes = UnsafeRawBufferPointer(rebasing: data[e.valueOffset..<e.valueOffset + length])
        if let nul = bytes.firstIndex(of: 0) { bytes = UnsafeRawBufferPointer(rebasing: bytes[..<nul]) }
        let s = String(decoding: bytes, as: UTF8.self).trimmingSpaces()
        return s.isEmpty ? nil : s
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        while s.first == " " { s.removeFirst() }
        return String(s)
    }
}
