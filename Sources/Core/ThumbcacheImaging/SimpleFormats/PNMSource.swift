/// Netpbm images: PBM, PGM, PPM (plain P1–P3 and raw P4–P6) and PAM (P7), 1 to 16 bits, gray,
/// RGB, with or without alpha. A parser of our own (Docs/IMAGING.md says why); binary rows are
/// read one at a time, so memory follows the width.
final class PNMSource: RowSource {
    private let reader: ByteReader
    private let kind: UInt8            // the digit after "P"
    private let channels: Int          // samples per pixel as stored
    private let maxValue: Int
    private let dataOffset: Int
    let header: RowSourceHeader

    init(descriptor: Int32, name: String) throws(ImagingError) {
        reader = try ByteReader(descriptor: descriptor, name: name)
        var stream = ByteStream(reader, at: 0)
        guard try stream.byte("header") == UInt8(ascii: "P") else { throw reader.corrupt("not a Netpbm file") }
        kind = try stream.byte("header") &- UInt8(ascii: "0")
        guard (1...7).contains(kind) else { throw reader.corrupt("unknown Netpbm kind P\(kind)") }
        var width = 0, height = 0, maxValue = 1, channels = 1, alpha = false
        if kind == 7 {
            (width, height, channels, maxValue, alpha) = try Self.pamHeader(&stream, reader)
        } else {
            width = try Self.number(&stream, reader)
            height = try Self.number(&stream, reader)
            if kind != 1 && kind != 4 { maxValue = try Self.number(&stream, reader) }
            // The single whitespace byte after the last number, which ends a raw file's header, was
            // read with it.
            channels = kind == 3 || kind == 6 ? 3 : 1
        }
        guard width > 0, height > 0, width <= 1 << 20, height <= 1 << 20 else { throw reader.corrupt("Netpbm size \(width)×\(height) out of range") }
        guard (1...65535).contains(maxValue) else { throw reader.corrupt("Netpbm maximum value \(maxValue) out of range") }
        self.maxValue = maxValue
        self.channels = channels
        dataOffset = stream.offset
        let bits = kind == 1 || kind == 4 ? 1 : maxValue > 255 ? 16 : 8
        header = RowSourceHeader(width: width, height: height, hasAlpha: alpha, bitsPerSample: bits,
                                 colorSpace: channels >= 3 ? "RGB" : "Gray")
    }

    /// A decimal number after whitespace and `#` comments.
    private static func number(_ stream: inout ByteStream, _ reader: ByteReader) throws(ImagingError) -> Int {
        var b = try stream.byte("header")
        while true {
            if b == UInt8(ascii: "#") {
                while b != 10 && b != 13 { b = try stream.byte("header") }
            } else if b == 32 || (9...13).contains(b) {
                b = try stream.byte("header")
            } else {
                break
            }
        }
        var value = 0
        guard (48...57).contains(b) else { throw reader.corrupt("Netpbm header expects a number") }
        while (48...57).contains(b) {
            value = value * 10 + Int(b - 48)
            guard value <= 1 << 24 else { throw reader.corrupt("Netpbm number too large") }
            guard let next = try stream.next() else { return value }
            b = next
        }
        guard b == 32 || (9...13).contains(b) || b == UInt8(ascii: "#") else { throw reader.corrupt("Netpbm header expects whitespace") }
        if b == UInt8(ascii: "#") { while b != 10 && b != 13 { b = try stream.byte("header") } }
        return value
    }

    /// PAM's header: `KEY value` lines up to ENDHDR.
    private static func pamHeader(_ stream: inout ByteStream, _ reader: ByteReader) throws(ImagingError)
        -> (width: Int, height: Int, depth: Int, maxValue: Int, alpha: Bool) {
        var fields: [String: String] = [:]
        var line: [UInt8] = []
        var lines = 0
        while true {
            let b = try stream.byte("PAM header")
            guard b != 10 else {
                let text = String(decoding: line, as: UTF8.self).trimmingWhitespace()
                line = []
                lines += 1
                guard lines < 64 else { throw reader.corrupt("PAM header too long") }
                if text == "ENDHDR" { break }
                if text.isEmpty || text.hasPrefix("#") { continue }
                let parts = text.split(separator: " ", maxSplits: 1)
                fields[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
                continue
            }
            line.append(b)
            guard line.count < 256 else { throw reader.corrupt("PAM header line too long") }
        }
        guard let w = fields["WIDTH"].flatMap(Int.init), let h = fields["HEIGHT"].flatMap(Int.init),
              let depth = fields["DEPTH"].flatMap(Int.init), let maxValue = fields["MAXVAL"].flatMap(Int.init), (1...4).contains(depth)
        else { throw reader.corrupt("PAM header lacks WIDTH, HEIGHT, DEPTH or MAXVAL") }
        return (w, h, depth, maxValue, depth == 2 || depth == 4)
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) { (header.width, header.height) }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let (width, height) = (header.width, header.height)
        var row = [UInt8](repeating: 255, count: width * 4)
        if kind <= 3 {
            var stream = ByteStream(reader, at: dataOffset)
            for _ in 0..<height {
                for x in 0..<width {
                    for c in 0..<channels {
                        let v = kind == 1 ? try Self.bit(&stream, reader) : try Self.number(&stream, reader)
                        store(v, channel: c, x: x, in: &row)
                    }
                }
                row.withUnsafeBufferPointer { sink($0.baseAddress!) }
            }
            return
        }
        let bytesPerSample = maxValue > 255 ? 2 : 1
        let stride = kind == 4 ? (width + 7) / 8 : width * channels * bytesPerSample
        var raw = [UInt8](repeating: 0, count: stride)
        // Rows of 8-bit samples at full scale, the common case, are copied without the general
        // per-sample path (a quarter of the time on a 4 MP PPM).
        let direct = kind != 4 && bytesPerSample == 1 && maxValue == 255
        for y in 0..<height {
            try reader.read(into: &raw, at: dataOffset + y * stride, what: "Netpbm row \(y)")
            if direct {
                copyRow(raw, into: &row)
                row.withUnsafeBufferPointer { sink($0.baseAddress!) }
                continue
            }
            for x in 0..<width {
                if kind == 4 {
                    store(Int(raw[x / 8] >> (7 - UInt8(x % 8)) & 1), channel: 0, x: x, in: &row)
                    continue
                }
                for c in 0..<channels {
                    let i = (x * channels + c) * bytesPerSample
                    store(bytesPerSample == 2 ? Int(raw[i]) << 8 | Int(raw[i + 1]) : Int(raw[i]), channel: c, x: x, in: &row)
                }
            }
            row.withUnsafeBufferPointer { sink($0.baseAddress!) }
        }
    }

    /// One row of 8-bit samples (1 to 4 channels, maximum 255) into RGBA.
    private func copyRow(_ raw: [UInt8], into row: inout [UInt8]) {
        let width = header.width
        raw.withUnsafeBufferPointer { src in
            row.withUnsafeMutableBufferPointer { dst in
                let s = src.baseAddress!, d = dst.baseAddress!
                switch channels {
                case 1: for x in 0..<width { let v = s[x]; d[x * 4] = v; d[x * 4 + 1] = v; d[x * 4 + 2] = v }
                case 2: for x in 0..<width { let v = s[x * 2]; d[x * 4] = v; d[x * 4 + 1] = v; d[x * 4 + 2] = v; d[x * 4 + 3] = s[x * 2 + 1] }
                case 3: for x in 0..<width { d[x * 4] = s[x * 3]; d[x * 4 + 1] = s[x * 3 + 1]; d[x * 4 + 2] = s[x * 3 + 2] }
                default: d.update(from: s, count: width * 4)
                }
            }
        }
    }

    private static func bit(_ stream: inout ByteStream, _ reader: ByteReader) throws(ImagingError) -> Int {
        while true {
            let b = try stream.byte("PBM data")
            if b == UInt8(ascii: "0") || b == UInt8(ascii: "1") { return Int(b - 48) }
            if b == UInt8(ascii: "#") {
                var c = b
                while c != 10 && c != 13 { c = try stream.byte("PBM data") }
            } else if !(b == 32 || (9...13).contains(b)) {
                throw reader.corrupt("PBM data expects 0 or 1")
            }
        }
    }

    /// One sample into the RGBA row: scaled from 0…maxValue to 0…255 (PBM: 1 is black).
    private func store(_ value: Int, channel: Int, x: Int, in row: inout [UInt8]) {
        let v: UInt8
        if kind == 1 || kind == 4 {
            v = value == 0 ? 255 : 0
        } else {
            v = UInt8((min(value, maxValue) * 255 + maxValue / 2) / maxValue)
        }
        let o = x * 4
        switch (channels, channel) {
        case (1, _), (2, 0): (row[o], row[o + 1], row[o + 2]) = (v, v, v)
        case (2, 1), (4, 3): row[o + 3] = v
        default: row[o + channel] = v
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
