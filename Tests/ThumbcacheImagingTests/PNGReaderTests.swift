import CThumbcachePNG
import CThumbcacheTestPNG
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

/// thumbcache's own PNG reader (ISA-L inflate, its own unfiltering) against libpng on the same
/// files: the same pixels for every layout it takes, libpng for the rest, errors where libpng errs.
struct PNGReaderTests {
    struct Layout: CustomTestStringConvertible, Sendable {
        let color: Int32
        let depth: Int32
        var channels: Int { [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(color)]! }
        var testDescription: String { "color type \(color), \(depth) bits" }
    }

    static let layouts = [(0, 8), (0, 16), (2, 8), (2, 16), (3, 8), (4, 8), (4, 16), (6, 8), (6, 16)]
        .map { Layout(color: Int32($0.0), depth: Int32($0.1)) }

    /// Rows as PNG stores them: smooth ramps with noise, so that every filter has work to do.
    static func samples(width: Int, height: Int, layout: Layout, random: inout SeededRandom) -> [UInt8] {
        let perRow = width * layout.channels
        var out: [UInt8] = []
        out.reserveCapacity(perRow * height * Int(layout.depth) / 8)
        for y in 0..<height {
            for i in 0..<perRow {
                let ramp = (i * 5 + y * 3) & 0xff
                let value = layout.color == 3 ? (i + y) % 200 : min(255, ramp + Int(random.next() % 9))
                if layout.depth == 16 {
                    out += [UInt8(value), UInt8(truncatingIfNeeded: random.next())]
                } else {
                    out.append(UInt8(value))
                }
            }
        }
        return out
    }

    static let palette: [UInt8] = (0..<200).flatMap { (i: Int) -> [UInt8] in [UInt8(i), UInt8(255 - i), UInt8(i * 7 & 0xff)] }

    static func encode(_ samples: [UInt8], width: Int, height: Int, layout: Layout, filter: Int32 = -1, idatSize: Int = 0,
                       interlaced: Bool = false, trns: [UInt8]? = nil, key: [UInt16]? = nil) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = palette.withUnsafeBufferPointer { colors in
            (trns ?? []).withUnsafeBufferPointer { alphas in
                (key ?? []).withUnsafeBufferPointer { keyValues in
                    var format = ctestpng_format(
                        width: UInt32(width), height: UInt32(height), color_type: layout.color, bit_depth: layout.depth,
                        interlaced: interlaced ? 1 : 0, filter: filter, idat_size: idatSize,
                        palette: layout.color == 3 ? colors.baseAddress : nil, palette_count: Int32(palette.count / 3),
                        trns: trns == nil ? nil : alphas.baseAddress, trns_count: Int32(trns?.count ?? 0),
                        key: key == nil ? nil : keyValues.baseAddress)
                    return ctestpng_encode(samples, samples.count / height, &format, &out, &length)
                }
            }
        }
        precondition(status == 0 && out != nil, "libpng could not write the test PNG")
        defer { ctestpng_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: length))
    }

    /// Every row as RGBA8, and whether thumbcache's own reader made them.
    static func decode(_ png: [UInt8], throughLibpng: Bool = false) throws(ImagingError) -> (pixels: [UInt8], ownReader: Bool) {
        let result: Result<([UInt8], Bool), ImagingError> = png.withUnsafeBytes { raw in
            do {
                let source = try PNGSource(memory: raw, name: "test.png", throughLibpng: throughLibpng)
                _ = try source.start(shrink: 1, fast: false)
                var pixels: [UInt8] = []
                try source.readRows { row in pixels.append(contentsOf: UnsafeBufferPointer(start: row, count: source.width * 4)) }
                return .success((pixels, source.usesOwnReader))
            } catch let error as ImagingError {
                return .failure(error)
            } catch {
                fatalError("only ImagingError is thrown")
            }
        }
        return try result.get()
    }

    static func expectSameAsLibpng(_ png: [UInt8], ownReader: Bool = true, _ what: @autoclosure () -> String,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours: (pixels: [UInt8], ownReader: Bool)
        do {
            ours = try decode(png)
        } catch {
            Issue.record("\(what()): \(error)", sourceLocation: sourceLocation)
            return
        }
        let reference = try decode(png, throughLibpng: true)
        #expect(ours.ownReader == ownReader, "\(what()): which reader", sourceLocation: sourceLocation)
        #expect(!reference.ownReader)
        #expect(ours.pixels == reference.pixels, "\(what()): pixels differ from libpng's", sourceLocation: sourceLocation)
    }

    @Test(arguments: layouts)
    func everyFilterAndChunkingGivesLibpngsPixels(layout: Layout) throws {
        var random = SeededRandom.forTest()
        // One pixel (Adam7 passes left empty); narrower than the vector converters' step; several batches of rows.
        for (width, height) in [(1, 3), (7, 5), (613, 37)] {
            let samples = Self.samples(width: width, height: height, layout: layout, random: &random)
            for filter: Int32 in -1...4 {
                for idatSize in [0, 61] {  // 61-byte IDAT chunks: the stream crosses chunks everywhere
                    for interlaced in [false, true] {
                        let png = Self.encode(samples, width: width, height: height, layout: layout, filter: filter, idatSize: idatSize,
                                              interlaced: interlaced)
                        try Self.expectSameAsLibpng(png, "\(width)×\(height), filter \(filter), IDAT \(idatSize), Adam7 \(interlaced)")
                    }
                }
            }
        }
        // A tall image: many batches, each row's Up and Paeth reading the row above across batches.
        let samples = Self.samples(width: 3, height: 30_000, layout: layout, random: &random)
        try Self.expectSameAsLibpng(Self.encode(samples, width: 3, height: 30_000, layout: layout), "3×30000")
    }

    /// The pixels above come from whichever vector code this CPU runs; every one it has must
    /// agree with the byte-by-byte filters (an AVX2 machine would otherwise never run SSE4.1's).
    @Test func everyUnfilterImplementationAgrees() {
        var random = SeededRandom.forTest()
        #expect(cpng_unfilter_disagreements(UInt32(truncatingIfNeeded: random.next())) == 0)
    }

    @Test func transparencyIsExpandedAsLibpngDoes() throws {
        var random = SeededRandom.forTest()
        let (width, height) = (40, 9)
        // A palette with fewer alphas than colours; colour keys that occur in the image.
        let palette = Layout(color: 3, depth: 8)
        let indexed = Self.samples(width: width, height: height, layout: palette, random: &random)
        try Self.expectSameAsLibpng(Self.encode(indexed, width: width, height: height, layout: palette,
                                                trns: (0..<60).map { UInt8($0 * 4) }), "palette with tRNS")
        for layout in [Layout(color: 0, depth: 8), Layout(color: 2, depth: 8), Layout(color: 0, depth: 16), Layout(color: 2, depth: 16)] {
            let samples = Self.samples(width: width, height: height, layout: layout, random: &random)
            let bytesPerSample = Int(layout.depth) / 8
            let first = (0..<layout.channels).map { (i: Int) -> UInt16 in
                layout.depth == 16 ? UInt16(samples[2 * i]) << 8 | UInt16(samples[2 * i + 1]) : UInt16(samples[i])
            }
            let png = Self.encode(samples, width: width, height: height, layout: layout, key: first)
            try Self.expectSameAsLibpng(png, "\(layout.testDescription) with a colour key")
            let pixels = try Self.decode(png).pixels
            #expect(pixels[3] == 0, "the first pixel has the key's colour, so it is transparent")
            #expect(pixels.count == width * height * 4 && bytesPerSample > 0)
        }
    }

    @Test func whatTheReaderDoesNotTakeGoesToLibpng() throws {
        let gray4 = PNGWriter.make(width: 9, height: 4, colorType: 0, depth: 4) { x, y in [(x + y) % 16] }
        try Self.expectSameAsLibpng(gray4, ownReader: false, "4-bit gray")
        let palette2 = PNGWriter.make(width: 9, height: 4, colorType: 3, depth: 2, palette: [(1, 2, 3), (4, 5, 6), (7, 8, 9)]) { x, y in
            [(x + y) % 3]
        }
        try Self.expectSameAsLibpng(palette2, ownReader: false, "2-bit palette")
        // A critical chunk nobody knows: libpng refuses the file, and so the file is refused.
        var unknown = gray4
        unknown.insert(contentsOf: PNGWriter.chunk("ABCD", [1, 2, 3]), at: 33)
        #expect(throws: ImagingError.self) { try Self.decode(unknown) }
    }

    @Test func anAncillaryChunkWithABadCRCIsSkippedAsLibpngSkipsIt() throws {
        var png = PNGWriter.make(width: 5, height: 5, colorType: 2, depth: 8) { x, y in [x * 40, y * 40, 7] }
        var text = PNGWriter.chunk("tEXt", Array("Comment\0hello".utf8))
        text[text.count - 1] ^= 0xff
        png.insert(contentsOf: text, at: 33)
        try Self.expectSameAsLibpng(png, "a tEXt chunk with a bad CRC")
    }

    /// A PNG whose image data is `raw` (filter bytes and rows), stored uncompressed and split
    /// into IDAT chunks of `split` bytes, with `between` inserted after the first chunk.
    static func rawPNG(width: Int, height: Int, raw: [UInt8], split: Int = 1 << 20, between: [UInt8] = []) -> [UInt8] {
        let ihdr = PNGWriter.be32(UInt32(width)) + PNGWriter.be32(UInt32(height)) + [8, 0, 0, 0, 0]
        let stream = PNGWriter.zlibStored(raw)
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + PNGWriter.chunk("IHDR", ihdr)
        for start in stride(from: 0, to: stream.count, by: split) {
            file += PNGWriter.chunk("IDAT", Array(stream[start..<min(stream.count, start + split)]))
            if start == 0 { file += between }
        }
        return file + PNGWriter.chunk("IEND", [])
    }

    static func failure(_ png: [UInt8], throughLibpng: Bool = false) -> String? {
        do {
            _ = try decode(png, throughLibpng: throughLibpng)
            return nil
        } catch {
            guard case .corrupt(let message) = error.reason else { return "not reported as corrupt: \(error)" }
            return message
        }
    }

    @Test func damagedImageDataFailsAsInLibpng() throws {
        let row = [UInt8](repeating: 9, count: 8)
        let good: [UInt8] = (0..<6).flatMap { (_: Int) -> [UInt8] in [0] + row }
        try Self.expectSameAsLibpng(Self.rawPNG(width: 8, height: 6, raw: good, split: 7), "stored blocks in 7-byte IDATs")

        let badFilter = Self.rawPNG(width: 8, height: 6, raw: good.enumerated().map { (i: Int, byte: UInt8) -> UInt8 in i == 18 ? 5 : byte })
        #expect(Self.failure(badFilter) == "bad adaptive filter value")
        #expect(Self.failure(badFilter, throughLibpng: true) != nil)

        let short = Self.rawPNG(width: 8, height: 6, raw: Array(good.prefix(40)))
        #expect(Self.failure(short) == "Not enough image data")
        #expect(Self.failure(short, throughLibpng: true) != nil)

        let interrupted = Self.rawPNG(width: 8, height: 6, raw: good, split: 20, between: PNGWriter.chunk("tEXt", Array("a\0b".utf8)))
        #expect(Self.failure(interrupted) == "Not enough image data")
        #expect(Self.failure(interrupted, throughLibpng: true) != nil)

        var crc = Self.rawPNG(width: 8, height: 6, raw: good, split: 20)
        crc[33 + 8 + 20] ^= 1  // the first IDAT's CRC: after the signature, IHDR, its header and its 20 bytes
        #expect(Self.failure(crc) == "IDAT: CRC error")
        #expect(Self.failure(crc, throughLibpng: true) != nil)

        let interlaced = PNGWriter.make(width: 8, height: 6, colorType: 0, depth: 8, interlaced: true) { x, y in [x * 9 + y] }
        try Self.expectSameAsLibpng(interlaced, "stored Adam7")
        var cut = interlaced
        cut.removeSubrange(cut.count - 30..<cut.count)
        #expect(Self.failure(cut)?.contains("truncated") == true)
        #expect(Self.failure(cut, throughLibpng: true) != nil)
    }

    @Test func aCutAnywhereInTheImageDataIsAnErrorNamingTruncation() throws {
        var random = SeededRandom.forTest()
        let layout = Layout(color: 6, depth: 8)
        let samples = Self.samples(width: 50, height: 40, layout: layout, random: &random)
        let png = Self.encode(samples, width: 50, height: 40, layout: layout, idatSize: 500)
        for cut in stride(from: 60, to: png.count - 12, by: 97) {
            let message = Self.failure(Array(png.prefix(cut)))
            #expect(message?.contains("truncated") == true || message?.contains("IDAT") == true, "cut at \(cut): \(message ?? "no error")")
        }
    }
}
