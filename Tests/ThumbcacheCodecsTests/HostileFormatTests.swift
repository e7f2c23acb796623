import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// Broken files of every format through the real worker: truncated at several points, empty,
/// garbage after the header, headers claiming huge sizes. Each gives a decoder's error naming
/// the file, or (where the damage missed the first image) a thumbnail — never a crashed, hung or
/// killed worker.
@Suite(.serialized)
struct HostileFormatTests {
    static let pool = WorkerPool(.init(workers: 1, timeout: 20))

    /// One valid fixture per format, made as ImageFormatTests makes them.
    static func seeds(_ dir: TemporaryDirectory) throws -> [String: String] {
        let photo = TestPictures.source(), clear = TestPictures.source(alpha: true)
        func make(_ name: String, _ image: RGBAImage, _ tool: String, _ args: @escaping (String, String) -> [String]) throws -> String {
            try FixtureTools.fixture(dir, name, from: image, tool, args)
        }
        let a = try dir.write("frame-a.png", ImageEncoder.png(photo)), b = try dir.write("frame-b.png", ImageEncoder.png(clear))
        let animated = dir.appending("anim.gif")
        try FixtureTools.run("convert", ["-delay", "10", a, b, animated])
        return [
            "webp": try make("photo.webp", clear, "cwebp") { ["-quiet", "-q", "90", $0, "-o", $1] },
            "gif": animated,
            "tiff": try make("photo.tif", photo, "convert") { [$0, "-alpha", "off", "-compress", "lzw", $1] },
            "tiff-tiled": try make("tiled.tif", photo, "convert") { [$0, "-alpha", "off", "-define", "tiff:tile-geometry=64x64", $1] },
            "heic": try make("photo.heic", photo, "heif-enc") { ["-q", "90", "-o", $1, $0] },
            "heic-grid": try ImageFormatTests.heicGrid(dir, "grid.heic", from: photo, tile: 128, rotate: 1),
            // Alpha: the image worker hands it on to the heavy worker's libheif.
            "heic-alpha": try make("alpha.heic", clear, "heif-enc") { ["-q", "90", "-o", $1, $0] },
            "avif": try make("photo.avif", photo, "convert") { [$0, "-alpha", "off", $1] },
            "jxl": try make("photo.jxl", clear, "cjxl") { [$0, $1, "--quiet"] },
            "svg": try dir.write("drawing.svg", Array(TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "width=\"40\" height=\"20\"")
                .replacingOccurrences(of: "IMAGE", with: "").utf8)),
            "dng": try dir.write("camera.dng", DNGFixture(raw: TestPictures.source(width: 240, height: 160),
                                                           preview: try ImageEncoder.jpeg(photo, quality: 90)).build()),
            "bmp": try make("photo.bmp", photo, "convert") { [$0, "-alpha", "off", "BMP3:" + $1] },
            "bmp-rle": try make("rle.bmp", TestPictures.graphic(transparent: false), "convert") {
                [$0, "-alpha", "off", "-type", "Palette", "-compress", "RLE", "BMP3:" + $1]
            },
            "ico": try make("icon.ico", TestPictures.source(width: 48, height: 48, alpha: true), "convert") { [$0, $1] },
            "ppm": try make("photo.ppm", photo, "convert") { [$0, "-alpha", "off", $1] },
            "pgm-plain": try make("plain.pgm", photo, "convert") { [$0, "-alpha", "off", "-compress", "none", "PGM:" + $1] },
            "tga": try make("photo.tga", photo, "/usr/bin/python3", FixtureTools.pillowTGA(rle: true)),
        ]
    }

    /// Decodes `path`: a decoder's error must name the file; a worker failure is a test failure.
    static func attempt(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) -> Result<ImageInfo, ImagingError>? {
        do {
            return .success(try pool.thumbnail(ofFileAt: path, options: ImageFormatTests.box, format: nil).info)
        } catch let error as ImagingError {
            #expect(error.path == path, sourceLocation: sourceLocation)
            return .failure(error)
        } catch {
            Issue.record("\(path): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func truncatedEmptyAndGarbledFilesOfEveryFormatFailCleanly() throws {
        let dir = TemporaryDirectory()
        let (started, families) = (Self.pool.workersStarted, Self.pool.familiesStarted.count)
        var failed = 0, total = 0
        for (kind, seed) in try Self.seeds(dir).sorted(by: { $0.key < $1.key }) {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: seed)))
            let ext = (seed as NSString).pathExtension
            // Cuts inside the header and at a quarter, a half and nine tenths of the file.
            for cut in [12, 40, bytes.count / 4, bytes.count / 2, bytes.count * 9 / 10] where cut < bytes.count {
                let path = try dir.write("\(kind)-cut\(cut).\(ext)", Array(bytes.prefix(cut)))
                total += 1
                if case .failure = Self.attempt(path) { failed += 1 }
            }
            // The body overwritten with a pattern, the first 64 bytes (the header) kept.
            var garbled = bytes
            for i in stride(from: min(64, bytes.count), to: bytes.count, by: 1) { garbled[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
            _ = Self.attempt(try dir.write("\(kind)-garbled.\(ext)", garbled))
            let empty = try dir.write("\(kind)-empty.\(ext)", [])
            guard case .failure(let error)? = Self.attempt(empty) else { Issue.record("\(empty) decoded"); continue }
            #expect(error.reason == .empty)
        }
        // Most cuts fail with the decoder's reason; none may cost a worker.
        #expect(total - failed <= 2, "\(failed) of \(total) truncated files failed")
        // One worker per family (images, vector, heavy) and no more.
        #expect(Self.pool.workersStarted - started == Self.pool.familiesStarted.count - families, "a worker was replaced: one crashed or hung")
    }

    /// Headers claiming 100000 × 100000 (or each format's largest): refused from the header, before
    /// memory for the pixels exists.
    @Test func headersClaimingHugeSizesAreRefused() throws {
        let dir = TemporaryDirectory()
        let seeds = try Self.seeds(dir)
        func patched(_ kind: String, _ edit: (inout [UInt8]) -> Void) throws -> String {
            var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: seeds[kind]!)))
            edit(&bytes)
            return try dir.write("bomb-" + (seeds[kind]! as NSString).lastPathComponent, bytes)
        }
        func le16(_ b: inout [UInt8], _ o: Int, _ v: Int) { b[o] = UInt8(v & 0xFF); b[o + 1] = UInt8(v >> 8 & 0xFF) }
        func le32(_ b: inout [UInt8], _ o: Int, _ v: Int) { le16(&b, o, v & 0xFFFF); le16(&b, o + 2, v >> 16) }
        func be32(_ b: inout [UInt8], _ o: Int, _ v: Int) { for k in 0..<4 { b[o + k] = UInt8(v >> (24 - 8 * k) & 0xFF) } }
        var bombs = [
            try patched("gif") { le16(&$0, 6, 65535); le16(&$0, 8, 65535) },
            try patched("bmp") { le32(&$0, 18, 100_000); le32(&$0, 22, 100_000) },
            try patched("tga") { le16(&$0, 12, 65535); le16(&$0, 14, 65535) },
            try patched("heic") { b in
                // The image spatial extents property: version/flags, then width and height.
                if let i = (0..<(b.count - 4)).first(where: { b[$0..<($0 + 4)].elementsEqual(Array("ispe".utf8)) }) {
                    be32(&b, i + 8, 100_000); be32(&b, i + 12, 100_000)
                }
            },
            try patched("heic-grid") { b in
                // The grid descriptor in idat (32-bit sides): 100000 × 100000 out of 128-pixel tiles.
                if let i = (0..<(b.count - 4)).first(where: { b[$0..<($0 + 4)].elementsEqual(Array("idat".utf8)) }) {
                    be32(&b, i + 8, 100_000); be32(&b, i + 12, 100_000)
                }
            },
            try dir.write("bomb.ppm", Array("P6\n100000 100000\n255\n".utf8) + [UInt8](repeating: 7, count: 4096)),
            // An extended WebP (the seed has alpha, so a VP8X chunk) whose canvas is 16 M × 16 M.
            try patched("webp") { b in
                guard b.count > 30, b[12..<16].elementsEqual(Array("VP8X".utf8)) else { return }
                for k in 24..<30 { b[k] = 0xFF }
            },
        ]
        let tiff = dir.appending("bomb.tif")
        try FileManager.default.copyItem(atPath: seeds["tiff"]!, toPath: tiff)
        try FixtureTools.run("tiffset", ["-s", "256", "100000", tiff])
        try FixtureTools.run("tiffset", ["-s", "257", "100000", tiff])
        bombs.append(tiff)
        for path in bombs {
            guard case .failure(let error)? = Self.attempt(path) else { Issue.record("\(path) was not refused"); continue }
            switch error.reason {
            case .tooLarge, .corrupt: break
            default: Issue.record("\(path): \(error.reason)")
            }
        }
        // A drawing that claims a huge size is still drawn at the box's size.
        let svg = try dir.write("huge.svg", Array(TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "width=\"100000\" height=\"50000\"")
            .replacingOccurrences(of: "IMAGE", with: "").utf8))
        guard case .success(let info)? = Self.attempt(svg) else { Issue.record("a large drawing was refused"); return }
        #expect(info.pixelWidth == 100_000)
    }

    /// A grid whose coded tiles are smaller than the size its `ispe` declares: decoded directly,
    /// the mismatch is the file's error, not a read past the tile's planes.
    @Test func heicGridTilesSmallerThanDeclaredFailCleanly() throws {
        let dir = TemporaryDirectory()
        let path = try ImageFormatTests.heicGrid(dir, "grid.heic", from: TestPictures.source(width: 300, height: 200), tile: 128)
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        // The first ispe is the tiles' (Tools/make-heic-grid): 128 becomes 160.
        let i = try #require((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(Array("ispe".utf8)) })
        bytes[i + 11] = 160
        bytes[i + 15] = 160
        let patched = try dir.write("grown.heic", bytes)
        guard case .failure(let error)? = Self.attempt(patched) else { Issue.record("\(patched) decoded"); return }
        #expect(error.description.contains("smaller than its declared size"), "\(error)")
    }

    /// A grid whose tiles' parameter sets state a picture larger than the tiles' `ispe`: refused
    /// from the sequence parameter set, before libde265 allocates the larger picture.
    @Test func heicGridTilesLargerThanDeclaredAreRefused() throws {
        let dir = TemporaryDirectory()
        let path = try ImageFormatTests.heicGrid(dir, "grid.heic", from: TestPictures.source(width: 300, height: 200), tile: 256)
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        // The tiles' ispe (the first): 256 × 256 declared as 150 × 200, which two columns still cover.
        let i = try #require((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(Array("ispe".utf8)) })
        (bytes[i + 10], bytes[i + 11], bytes[i + 14], bytes[i + 15]) = (0, 150, 0, 200)
        let patched = try dir.write("shrunk.heic", bytes)
        guard case .failure(let error)? = Self.attempt(patched) else { Issue.record("\(patched) decoded"); return }
        #expect(error.description.contains("256×256 picture, larger than its declared 150×200"), "\(error)")
    }

    /// A float TIFF whose tags say gray with two samples and no alpha: refused with the reason,
    /// rather than read as three colour samples per two-sample pixel.
    @Test func floatTIFFWhoseSamplesDoNotFitItsPhotometricIsRefused() throws {
        let dir = TemporaryDirectory()
        let path = try FixtureTools.fixture(dir, "lying.tif", from: TestPictures.source(), "/usr/bin/python3") {
            ["-c", ImageFormatTests.floatTIFFWriter, $0, $1, "1", "1", "2"]
        }
        guard case .failure(let error)? = Self.attempt(path) else { Issue.record("\(path) decoded"); return }
        #expect(error.description.contains("do not fit the photometric interpretation"), "\(error)")
    }

    /// Bytes decide, never the name: a GIF named .png, a TIFF named .jpg.
    @Test func wrongExtensionsAreDecodedByContent() throws {
        let dir = TemporaryDirectory()
        let seeds = try Self.seeds(dir)
        for (kind, fake) in [("gif", "png"), ("tiff", "jpg"), ("webp", "gif"), ("heic", "tif")] {
            let path = dir.appending("misnamed-\(kind).\(fake)")
            try FileManager.default.copyItem(atPath: seeds[kind]!, toPath: path)
            guard case .success(let info)? = Self.attempt(path) else { Issue.record("\(path) failed"); continue }
            #expect(info.format.rawValue == (kind == "heic" ? "heif" : kind))
            #expect(ContentTypeRegistry().type(ofFileAt: path).identifier == FormatCatalogue.declaration(of: info.format)!.typeIdentifier)
        }
    }
}
