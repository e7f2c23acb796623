import Foundation
import Glibc
import Testing
@testable import ThumbcacheCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport

/// A one-picture HEIC is handed on a band at a time while libde265 decodes it, and the pages of
/// the band go behind it (`StreamedPlanes`, Docs/IMAGING.md).
@Suite struct HEIFStreamingTests {
    /// A 12 MP HEIC of `bits`, gradients under noise so that libde265 takes a while over it: vips
    /// draws it, heif-enc codes it as one picture (10 bits from a 16-bit PNG by ImageMagick).
    static func textured(_ dir: TemporaryDirectory, bits: Int, width: Int = 4000, height: Int = 3000) throws -> String {
        func v(_ name: String) -> String { dir.appending(name + ".v") }
        let steps: [[String]] = [
            ["xyz", v("xy"), String(width), String(height)],
            ["extract_band", v("xy"), v("x"), "0"], ["extract_band", v("xy"), v("y"), "1"],
            ["gaussnoise", v("noise"), String(width), String(height), "--mean", "0", "--sigma", "14"],
            ["linear", v("x"), v("r"), "0.05", "20"], ["linear", v("y"), v("g"), "0.07", "10"],
            ["add", v("r"), v("noise"), v("rn")], ["bandjoin", "\(v("rn")) \(v("g")) \(v("r"))", v("rgb")],
            ["cast", v("rgb"), dir.appending("textured.jpg[Q=95]"), "uchar"],
        ]
        for step in steps { try FixtureTools.run("vips", step) }
        var input = dir.appending("textured.jpg")
        if bits > 8 {
            try FixtureTools.run("convert", [input, "-depth", "16", "PNG48:" + dir.appending("textured.png")])
            input = dir.appending("textured.png")
        }
        try FixtureTools.run("heif-enc", ["-q", "60", "-b", String(bits), "-p", "preset=ultrafast", "-o", dir.appending("textured.heic"), input])
        return dir.appending("textured.heic")
    }

    /// `body` given the one coded picture of the HEIC at `path`: its configuration record, its
    /// coded bytes and its item.
    static func withOnePicture(_ path: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, HEIFContainer.ItemID) throws -> Void) throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        try file.withUnsafeBytes { bytes in
            let container = try HEIFContainer(bytes)
            let item = container.primary
            var record: Range<Int>?
            for p in container.properties(of: item) { if case .hvcC(let r) = p.property { record = r } }
            let extents = try container.extents(of: item)
            try #require(record != nil && extents.count == 1)
            try body(UnsafeRawBufferPointer(rebasing: bytes[record!]), UnsafeRawBufferPointer(rebasing: bytes[extents[0]]), item)
        }
    }

    /// Rows handed on before the decode ends are already final: they equal a whole decode's. The
    /// pages above them are gone by the end. Samples above 8 bits take two bytes.
    @Test(arguments: [8, 10]) func rowsAreHandedOnFinishedAndTheirPagesGo(bits: Int) throws {
        let dir = TemporaryDirectory()
        let path = try Self.textured(dir, bits: bits)
        try Self.withOnePicture(path) { config, coded, item in
            let whole = try HEVCTileDecoder(path: path, fast: true)
            let reference = try whole.decode(config: config, data: coded, tile: item, declared: (4000, 3000), copied: {})
            #expect(reference.bits == bits)
            let (width, height) = (reference.width * (bits > 8 ? 2 : 1), reference.height)
            func luma(_ picture: DecodedTile, rows: Range<Int>, into out: inout [UInt8]) {
                let (base, stride) = picture.planes[0]
                out.withUnsafeMutableBytes { out in
                    for y in rows { (out.baseAddress! + y * width).copyMemory(from: base + y * stride, byteCount: width) }
                }
            }
            var expected = [UInt8](repeating: 0, count: width * height)
            luma(reference, rows: 0..<height, into: &expected)
            whole.release()

            let streamed = try HEVCTileDecoder(path: path, fast: true, streamed: true)
            var got = [UInt8](repeating: 7, count: width * height)
            var handed = 0, before = 0, residentAbove = -1
            try streamed.decodeStreamed(config: config, data: coded, tile: item, declared: (4000, 3000), copied: {}) { picture, finished in
                if finished == picture.height, handed > 0 {
                    // The last call: count the luma pages wholly above what was handed on before it.
                    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
                    let (base, stride) = picture.planes[0]
                    let start = (Int(bitPattern: base) + page - 1) / page * page, end = (Int(bitPattern: base) + handed * stride) / page * page
                    var residency = [UInt8](repeating: 0, count: max(0, end - start) / page)
                    if end > start { _ = mincore(UnsafeMutableRawPointer(bitPattern: start), end - start, &residency) }
                    residentAbove = residency.filter { $0 & 1 != 0 }.count
                    before = handed
                }
                luma(picture, rows: handed..<finished, into: &got)
                handed = finished
                return finished
            }
            streamed.release()
            // Compared by rows, so that a failure names rows instead of printing two 12 MB arrays.
            let differing = (0..<height).filter { got[$0 * width..<($0 + 1) * width] != expected[$0 * width..<($0 + 1) * width] }
            #expect(differing.isEmpty, "\(differing.count) rows differ from a whole decode's, the first \(differing.first ?? 0)")
            #expect(before > 0 && before < height, "no rows before the decode ended")
            #expect(residentAbove == 0, "\(residentAbove) pages above row \(before) still resident")
        }
    }

    /// A picture parameter set with tiles finishes rows out of raster order: such a picture is
    /// read once decoded. H.265 7.3.2.3.1, written bit by bit.
    @Test func picturesWithTilesAreNotStreamed() {
        func pps(cuQPDelta: Bool, tiles: Bool) -> [UInt8] {
            // ue(0) = "1"; two ids, seven flag bits, two counts, init_qp, two flags.
            var bits = "1" + "1" + "0000000" + "1" + "1" + "1" + "00"
            bits += cuQPDelta ? "1" + "010" : "0"  // diff_cu_qp_delta_depth ue(1) = "010"
            bits += "1" + "1" + "0000" + (tiles ? "1" : "0") + "0" + "1"
            while bits.count % 8 != 0 { bits += "0" }
            var nal: [UInt8] = [0x44, 0x01]  // type 34
            var i = bits.startIndex
            while i < bits.endIndex {
                let j = bits.index(i, offsetBy: 8)
                nal.append(UInt8(bits[i..<j], radix: 2)!)
                i = j
            }
            return nal
        }
        for cuQPDelta in [false, true] {
            #expect(pps(cuQPDelta: cuQPDelta, tiles: true).withUnsafeBytes { HEVCBitstream.usesTiles(pps: $0) } == true)
            #expect(pps(cuQPDelta: cuQPDelta, tiles: false).withUnsafeBytes { HEVCBitstream.usesTiles(pps: $0) } == false)
        }
        #expect([UInt8]([0x44, 0x01]).withUnsafeBytes { HEVCBitstream.usesTiles(pps: $0) } == nil)
    }
}
