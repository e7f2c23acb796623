import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheIndex
import ThumbcacheTestSupport
import ThumbcacheWorker
@testable import Thumbcache

/// Every fuzz seed and every input that once crashed a harness (FuzzRegressions/), through the
/// same calls as the harness (Fuzz/Sources: ImageHarness and fuzz-*/Harness.swift), in an ordinary test run: each
/// must end in a value or a typed error, never a crash.
struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    static func inputs(_ harness: String) -> [URL] {
        let folders = [root.appendingPathComponent("FuzzRegressions/\(harness)"),
                       root.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/Seeds/\(harness)")]
        return folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
                .filter { !$0.lastPathComponent.hasPrefix(".") && $0.pathExtension != "md" }
        }
    }

    static let options = ThumbnailOptions(maxWidth: 32, maxHeight: 32, limits: DecodeLimits(maxPixels: 1 << 22, maxBufferedPixels: 1 << 20))

    @Test(arguments: ["png", "jpeg"])
    func imageInputs(harness: String) throws {
        let files = Self.inputs(harness)
        #expect(!files.isEmpty)
        var decoded = 0
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            _ = try? (harness == "png" ? ImageDecoder.png(bytes, maxPixels: 1 << 20) : ImageDecoder.jpeg(bytes, maxPixels: 1 << 20))
            let format: ImageFormat = harness == "png" ? .png : .jpeg
            if (try? Thumbnailer.thumbnail(ofFileAt: file.path, options: Self.options, format: format)) != nil { decoded += 1 }
            _ = try? Thumbnailer.info(ofFileAt: file.path, format: format)
            if harness == "jpeg" { _ = try? Thumbnailer.embeddedThumbnail(ofFileAt: file.path) }
        }
        // The seeds are valid images: the harness starts from inputs that reach the pixels.
        #expect(decoded >= Self.inputs(harness).filter { $0.path.contains("/Fuzz/Seeds/") }.count)
    }

    /// The two-thread JPEG harness's inputs (fuzz-jpeg2): a thumbnail with two decode threads, the
    /// guessed cut or the cut at a restart marker.
    @Test func twoThreadJPEGInputs() throws {
        var decoders = ImageDecoders.standard
        decoders.settings = DecodeSettings(threads: 2)
        let files = Self.inputs("jpeg2")
        #expect(!files.isEmpty)
        var decoded = 0
        for file in files where (try? Thumbnailer.thumbnail(ofFileAt: file.path, options: Self.options, format: .jpeg, decoders: decoders)) != nil {
            decoded += 1
        }
        #expect(decoded >= files.filter { $0.path.contains("/Fuzz/Seeds/") }.count)
    }

    /// The parsers of our own (fuzz-simple: the first byte picks BMP, ICO, Netpbm or TGA).
    @Test func simpleFormatInputs() throws {
        let formats: [ImageFormat] = [.bmp, .ico, .pnm, .tga]
        let decoders = ImageDecoders([.bmp, .ico, .cur, .pnm, .tga])
        let dir = TemporaryDirectory()
        var decoded = 0
        for file in Self.inputs("simple") {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let selector = bytes.first else { continue }
            let path = try dir.write("input", Array(bytes.dropFirst()))
            let format = formats[Int(selector) % formats.count]
            if (try? Thumbnailer.thumbnail(ofFileAt: path, options: Self.options, format: format, decoders: decoders)) != nil { decoded += 1 }
            _ = try? Thumbnailer.info(ofFileAt: path, format: format, decoders: decoders)
        }
        #expect(decoded >= Self.inputs("simple").filter { $0.path.contains("/Fuzz/Seeds/") }.count)
    }

    /// TIFF's LZW decoder (fuzz-lzw: two bytes of size, then the codes): the seeds, strips of
    /// real files, decode to their full size.
    @Test func lzwInputs() throws {
        let decoder = TIFFLZW()
        var decoded = 0
        for file in Self.inputs("lzw") {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard bytes.count > 2 else { continue }
            let size = Int(bytes[0]) << 8 | Int(bytes[1])
            var output = [UInt8](repeating: 0, count: size + TIFFLZW.slack)
            let made = output.withUnsafeMutableBufferPointer { out in
                bytes.dropFirst(2).withUnsafeBytes { try? decoder.decode($0, into: out.baseAddress!, count: size) }
            }
            if made == size { decoded += 1 }
        }
        #expect(decoded >= Self.inputs("lzw").filter { $0.path.contains("/Fuzz/Seeds/") }.count)
    }

    @Test func exifInputs() throws {
        for file in Self.inputs("exif") {
            let bytes = try [UInt8](Data(contentsOf: file))
            let exif = bytes.withUnsafeBytes { EXIFData.parse($0) }
            if let range = exif?.thumbnailRange { #expect(range.lowerBound >= 0 && range.upperBound <= bytes.count) }
        }
        #expect(try Self.inputs("exif").contains { try [UInt8](Data(contentsOf: $0)).withUnsafeBytes { EXIFData.parse($0)?.orientation } != nil })
    }

    /// The full-text readers (fuzz-text): the first byte picks one, as in the harness; each
    /// returns within its bound, and the seeds give words.
    @Test func textInputs() throws {
        var words = 0
        for file in Self.inputs("text") {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let first = bytes.first, let text = bytes.dropFirst().withUnsafeBytes({ Charset.decode($0) }) else { continue }
            let out = switch first % 4 {
            case 0: HTMLText.words(text)
            case 1: XMLText.words(text, paragraphs: ["p"], breaks: ["br"], tabs: ["tab"], only: ["t"])
            case 2: SubtitleText.words(text)
            default: MailText.words(text)
            }
            #expect(out.utf8.count <= (text.utf8.count * 4 + 16) * 2)
            if !out.isEmpty { words += 1 }
        }
        #expect(words >= 4, "the seeds give words")
    }

    /// The HEIF container reader (fuzz-heif): ranges it hands out stay inside the file.
    @Test func heifContainerInputs() throws {
        var parsed = 0
        for file in Self.inputs("heif") {
            let bytes = try [UInt8](Data(contentsOf: file))
            try bytes.withUnsafeBytes { raw in
                guard let container = try? HEIFContainer(raw) else { return }
                parsed += 1
                for (id, item) in container.items {
                    for e in (try? container.extents(of: id)) ?? [] { #expect(e.upperBound <= raw.count) }
                    if item.type == "grid" {
                        let grid = try container.grid(id, in: raw)
                        #expect(grid.tiles.count == grid.rows * grid.columns)
                    }
                }
            }
        }
        #expect(parsed >= Self.inputs("heif").filter { $0.path.contains("/Fuzz/Seeds/") }.count)
    }

    /// The TIFF shim (fuzz-tiff), through the image worker as a warm decodes it: a thumbnail or
    /// the decoder's error naming the file, never a lost worker.
    @Test func tiffInputs() throws {
        let pool = WorkerPool(.init(workers: 1))
        defer { pool.close() }
        #expect(Self.inputs("tiff").count >= 8)
        var decoded = 0
        for file in Self.inputs("tiff") {
            do {
                _ = try pool.thumbnail(ofFileAt: file.path, options: Self.options, format: .tiff)
                decoded += 1
            } catch let error as ImagingError {
                #expect(error.path == file.path)
            }
        }
        #expect(pool.workersStarted == 1)
        #expect(decoded >= Self.inputs("tiff").filter { $0.path.contains("/Fuzz/Seeds/") }.count)
    }

    @Test func sniffInputs() throws {
        let types = ContentTypeRegistry()
        for file in Self.inputs("sniff") {
            let bytes = try [UInt8](Data(contentsOf: file))
            let split = bytes.firstIndex(of: 0) ?? min(bytes.count, 8)
            let head = Array(bytes[min(split + 1, bytes.count)...].prefix(4096))
            let type = types.type(of: head, name: String(decoding: bytes[..<split], as: UTF8.self))
            head.withUnsafeBytes { raw in for signature in FormatCatalogue.all { _ = signature.sniffer?.test(raw) } }
            #expect(types.declaration(of: type) != nil, "\(file.lastPathComponent) → \(type)")
        }
    }

    @Test func queryInputs() throws {
        let parser = QueryParser(now: Date(timeIntervalSince1970: 1_700_000_000), calendar: Calendar(identifier: .gregorian))
        for file in Self.inputs("query") {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            do {
                _ = try parser.parse(text)
            } catch {
                #expect(error.position >= 0 && error.position <= text.count, "\(file.lastPathComponent): \(error)")
            }
        }
    }

    /// Found by Tools/fuzz png: a 431-byte PNG whose ancillary chunk claims 1.9 GB made libpng
    /// allocate (and touch) that much despite png_set_chunk_malloc_max; the shim now caps every
    /// allocation of libpng's. Decoded in a child process confined to 512 MiB of address space
    /// (util-linux's `prlimit`): a decode that tried to take the 1.9 GB would fail for want of
    /// memory, not for the file's fault. (The child's peak RSS cannot tell: a child started with
    /// `posix_spawn` reports this process's own peak when that is higher.)
    @Test func aChunksClaimedLengthIsNotAllocated() throws {
        let input = Self.root.appendingPathComponent("FuzzRegressions/png/chunk-claiming-1.9GB.png").path
        let dir = TemporaryDirectory()
        let child = try ChildProcess(program: "/usr/bin/prlimit", arguments: ["--as=\(512 << 20)", ChildProcess.productsDirectory + "/thumbcache",
                                                                             "thumbnail", "--in-process", input, "-o", dir.appending("out.png")])
        let (end, stderr) = child.wait()
        #expect(end == .exited(1) && stderr.contains("corrupt or truncated image"), "\(stderr)")
    }
}
