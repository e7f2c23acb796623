import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheImaging

/// A JPEG at 1/8 through the shim's own decoder (eighth.c), held to libjpeg's pixels byte for byte.
struct JPEGEighthTests {
    struct Flavour: CustomTestStringConvertible, Sendable {
        var name: String
        var lumaSampling: (Int, Int) = (1, 1)
        var progressive = false
        var gray = false
        var restartRows = 0
        var testDescription: String { name }
    }

    static let flavours: [Flavour] = [
        .init(name: "4:4:4"), .init(name: "4:2:2", lumaSampling: (2, 1)), .init(name: "gray", gray: true),
        .init(name: "progressive 4:4:4", progressive: true), .init(name: "progressive 4:2:2", lumaSampling: (2, 1), progressive: true),
        .init(name: "progressive gray", progressive: true, gray: true),
        .init(name: "4:4:4, restarts", restartRows: 1), .init(name: "progressive 4:2:2, restarts", lumaSampling: (2, 1), progressive: true, restartRows: 2),
        // Left to libjpeg by the shim (its chroma needs AC coefficients at 1/8): the same either way.
        .init(name: "4:2:0", lumaSampling: (2, 2)), .init(name: "progressive 4:2:0", lumaSampling: (2, 2), progressive: true),
    ]

    static let sizes: [(Int, Int)] = [(203, 157), (1, 1), (9, 17), (64, 48), (401, 7)]

    func jpeg(_ flavour: Flavour, width: Int, height: Int) throws -> [UInt8] {
        var options = ImageEncoder.JPEGOptions(quality: 85, progressive: flavour.progressive)
        options.lumaSampling = flavour.lumaSampling
        options.restartRows = flavour.restartRows
        if flavour.gray { options.color = .gray }
        return try ImageEncoder.jpeg(photoLikeImage(width: width, height: height), options: options)
    }

    func decode(_ jpeg: [UInt8], shrink: Int = 8, libjpegOnly: Bool, threads: Int = 1) throws(ImagingError) -> (width: Int, height: Int, pixels: [UInt8]) {
        let decoded = try decodeTelling(jpeg, shrink: shrink, libjpegOnly: libjpegOnly, threads: threads)
        return (decoded.width, decoded.height, decoded.pixels)
    }

    /// As `decode`, with which decoder took it (JPEGSource.decodedBy: 2 on two threads).
    func decodeTelling(_ jpeg: [UInt8], shrink: Int = 8, libjpegOnly: Bool = false, threads: Int = 1) throws(ImagingError)
        -> (width: Int, height: Int, pixels: [UInt8], decodedBy: Int)
    {
        let source = try JPEGSource(bytes: jpeg, path: "t.jpg", threads: threads)
        let (w, h) = try source.start(shrink: shrink, fast: true, libjpegOnly: libjpegOnly)
        var pixels: [UInt8] = []
        try source.readRows { pixels.append(contentsOf: UnsafeBufferPointer(start: $0, count: w * 4)) }
        return (w, h, pixels, source.decodedBy)
    }

    /// A photo with grain (a fixed sequence), whose scan is over the 128 KiB the two-thread decode needs.
    func grainyJPEG(_ flavour: Flavour, width: Int = 1280, height: Int = 960) throws -> [UInt8] {
        var image = photoLikeImage(width: width, height: height)
        var state: UInt32 = 2_463_534_242
        for i in image.pixels.indices where i % 4 != 3 {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            image.pixels[i] = UInt8(clamping: Int(image.pixels[i]) + Int(state >> 27) - 16)
        }
        var options = ImageEncoder.JPEGOptions(quality: 85, progressive: flavour.progressive)
        options.lumaSampling = flavour.lumaSampling
        options.restartRows = flavour.restartRows
        if flavour.gray { options.color = .gray }
        return try ImageEncoder.jpeg(image, options: options)
    }

    @Test(arguments: flavours)
    func oneEighthIsLibjpegsPixels(flavour: Flavour) throws {
        for (width, height) in Self.sizes {
            let bytes = try jpeg(flavour, width: width, height: height)
            let ours = try decode(bytes, libjpegOnly: false), libjpeg = try decode(bytes, libjpegOnly: true)
            #expect(ours.width == (width + 7) / 8 && ours.height == (height + 7) / 8)
            #expect(ours.width == libjpeg.width && ours.height == libjpeg.height)
            let differing = zip(ours.pixels, libjpeg.pixels).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(ours.pixels.count == libjpeg.pixels.count && differing == nil,
                    "\(flavour.name) \(width)×\(height): first differing byte at \(differing.map(String.init) ?? "-")")
        }
    }

    /// A one-component image's scan is never interleaved: an MCU is one block whatever the
    /// sampling factors say (here 2×2, which changes nothing in its data).
    @Test func aGrayJPEGWithSamplingFactorsIsOneBlockAnMCU() throws {
        var bytes = try jpeg(Flavour(name: "gray", gray: true), width: 211, height: 97)
        let sof = try #require(bytes.indices.dropLast().first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        try #require(bytes[sof + 9] == 1 && bytes[sof + 11] == 0x11)
        bytes[sof + 11] = 0x22
        let ours = try decode(bytes, libjpegOnly: false), libjpeg = try decode(bytes, libjpegOnly: true)
        let same = ours.pixels == libjpeg.pixels
        #expect(same)
    }

    /// The bytes of a progressive JPEG whose last scan (an AC scan) carries a code no table has.
    func damagedLastScan(_ jpeg: [UInt8]) throws -> [UInt8] {
        let sos = try #require(jpeg.indices.dropLast().last { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        let data = sos + 2 + Int(jpeg[sos + 2]) << 8 + Int(jpeg[sos + 3])
        let end = try #require(jpeg[data...].indices.dropLast().first { jpeg[$0] == 0xFF && jpeg[$0 + 1] != 0 })
        try #require(end - data >= 32)
        var damaged = jpeg
        for i in stride(from: data, to: data + 32, by: 2) { damaged[i] = 0xFF; damaged[i + 1] = 0 }  // all ones
        return damaged
    }

    /// At 1/8 a progressive JPEG's AC scans are skipped, not decoded: damage confined to them does
    /// not stop its thumbnail, whose pixels they cannot change; a scale that needs them reports it.
    @Test func aProgressiveJPEGAtOneEighthReadsOnlyItsDCScans() throws {
        let flavour = Flavour(name: "progressive 4:4:4", progressive: true)
        let intact = try jpeg(flavour, width: 203, height: 157)
        let damaged = try damagedLastScan(intact)
        let ours = try decode(damaged, libjpegOnly: false)
        #expect(ours.pixels == (try decode(intact, libjpegOnly: true)).pixels, "the intact file's pixels")
        #expect(throws: ImagingError.self) { try decode(damaged, libjpegOnly: true) }
        #expect(throws: ImagingError.self) { try decode(damaged, shrink: 4, libjpegOnly: false) }
    }

    /// A sequential image is decoded as its rows are asked for: where its data goes bad halfway, the
    /// rows already given stand and libjpeg, started over, gives the rest or its own error.
    @Test(arguments: [0.3, 0.6, 0.9])
    func aJPEGDamagedPartWayGivesWhatLibjpegGives(at fraction: Double) throws {
        let whole = try jpeg(Flavour(name: "4:2:2", lumaSampling: (2, 1)), width: 640, height: 480)
        var damaged = whole
        let at = Int(Double(whole.count) * fraction)
        for i in at..<(at + 24) where i + 1 < whole.count - 2 { damaged[i] = i % 2 == 0 ? 0xFF : 0xD3 }  // restart markers out of place
        func outcome(_ libjpegOnly: Bool) -> String {
            do {
                let decoded = try decode(damaged, libjpegOnly: libjpegOnly)
                return "\(decoded.width)×\(decoded.height) \(decoded.pixels.hashValue)"
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome(false) == outcome(true))
    }

    /// What the shim's decoder does not take cleanly it leaves to libjpeg, whose error the caller sees.
    @Test(arguments: [false, true])
    func aBrokenJPEGGivesLibjpegsOwnError(progressive: Bool) throws {
        let flavour = Flavour(name: "4:4:4", progressive: progressive)
        let whole = try jpeg(flavour, width: 203, height: 157)
        // Cut inside the first scan's data, so the DC (which the shim reads) is missing too.
        let firstScan = try #require(whole.indices.dropLast().first { whole[$0] == 0xFF && whole[$0 + 1] == 0xDA })
        let cut = Array(whole[..<(firstScan + 40)])
        func message(_ libjpegOnly: Bool) -> String? {
            do {
                _ = try decode(cut, libjpegOnly: libjpegOnly)
                return nil
            } catch {
                return "\(error)"
            }
        }
        let ours = try #require(message(false))
        #expect(ours == message(true))
        #expect(ours.contains("premature end") || ours.contains("Premature end"), "\(ours)")
    }

    /// Over the limit of images held whole, a progressive JPEG the shim decodes at 1/8 (3 bytes a
    /// block) still gets its thumbnail there; at any other scale, or of a kind libjpeg decodes
    /// (4:2:0), or where the shim gives up on bad data and libjpeg would hold it whole, the limit
    /// holds as it did.
    @Test func aProgressiveJPEGOverTheWholeImageLimitIsDecodedAtOneEighth() throws {
        let dir = TemporaryDirectory()
        let limits = DecodeLimits(maxBufferedPixels: 40_000)
        func thumbnail(_ bytes: [UInt8], size: Int, limits: DecodeLimits = limits) throws(ImagingError) -> RGBAImage {
            let path = try! dir.write("p.jpg", bytes)
            return try Thumbnailer.thumbnail(ofFileAt: path, options: .init(maxWidth: size, maxHeight: size, limits: limits)).image
        }
        func reason(_ bytes: [UInt8], size: Int) -> ImagingError.Reason? {
            do {
                _ = try thumbnail(bytes, size: size)
                return nil
            } catch {
                return error.reason
            }
        }
        let tooLarge = ImagingError.Reason.tooLarge(width: 400, height: 300, limit: 40_000)
        let progressive = try jpeg(Flavour(name: "progressive 4:2:2", lumaSampling: (2, 1), progressive: true), width: 400, height: 300)
        let small = try thumbnail(progressive, size: 24), withinDefaults = try thumbnail(progressive, size: 24, limits: DecodeLimits())
        #expect(small.width == 24 && small.pixels == withinDefaults.pixels)
        #expect(reason(progressive, size: 100) == tooLarge, "at 1/2, libjpeg holds it whole")
        let yuv420 = try jpeg(Flavour(name: "progressive 4:2:0", lumaSampling: (2, 2), progressive: true), width: 400, height: 300)
        #expect(reason(yuv420, size: 24) == tooLarge)
        // Its first scan (the DC) cut short: the shim gives up, and libjpeg may not take it.
        let firstScan = try #require(progressive.indices.dropLast().first { progressive[$0] == 0xFF && progressive[$0 + 1] == 0xDA })
        let cut = Array(progressive[..<(firstScan + 60)])
        #expect(reason(cut, size: 24) == tooLarge)
        #expect(throws: ImagingError.self) { try thumbnail(cut, size: 24, limits: DecodeLimits()) }
    }

    static let splitFlavours: [Flavour] = [.init(name: "4:2:0", lumaSampling: (2, 2)), .init(name: "4:4:4"),
                                           .init(name: "4:2:2", lumaSampling: (2, 1)), .init(name: "gray", gray: true),
                                           .init(name: "4:2:0, restarts", lumaSampling: (2, 2), restartRows: 1),
                                           .init(name: "4:4:4, restarts every 4 rows", restartRows: 4)]

    /// With two threads, a sequential scan is decoded from its start and, guessed, from its middle
    /// (or, with restart markers, from the one nearest the middle, exactly); the pixels are
    /// libjpeg's all the same (4:2:0's chroma through libjpeg's 2×2 IDCT).
    /// (Where the guessing thread gets no core in time, the first decodes the scan alone, as it
    /// may on a loaded machine: up to 20 decodes, each held to libjpeg's pixels, until one is on two.)
    @Test(arguments: splitFlavours)
    func onTwoThreadsTheScanGivesLibjpegsPixels(flavour: Flavour) throws {
        let bytes = try grainyJPEG(flavour)
        let libjpeg = try decode(bytes, libjpegOnly: true)
        var onTwo = false
        for _ in 0..<20 where !onTwo {
            let ours = try decodeTelling(bytes, threads: 2)
            onTwo = ours.decodedBy == 2
            #expect(ours.decodedBy != 0, "\(flavour.name): taken by the shim")
            #expect(ours.width == libjpeg.width && ours.height == libjpeg.height)
            let differing = zip(ours.pixels, libjpeg.pixels).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(ours.pixels.count == libjpeg.pixels.count && differing == nil, "\(flavour.name): first differing byte at \(differing.map(String.init) ?? "-")")
        }
        #expect(onTwo, "\(flavour.name): the guessing thread fell into step")
    }

    /// From a file, the second thread reads its own copy of the data (none of it mapped): the
    /// same pixels, decoded on two threads, guessed or cut at a restart marker.
    @Test(arguments: [0, 1])
    func fromAFileTheSecondThreadReadsItsOwnCopy(restartRows: Int) throws {
        let dir = TemporaryDirectory()
        let bytes = try grainyJPEG(Flavour(name: "4:2:0", lumaSampling: (2, 2), restartRows: restartRows))
        let file = try ImageFile(path: try dir.write("grainy.jpg", bytes))
        let source = try JPEGSource(descriptor: file.descriptor, name: "grainy.jpg", threads: 2)
        let (w, _) = try source.start(shrink: 8, fast: true)
        var pixels: [UInt8] = []
        try source.readRows { pixels.append(contentsOf: UnsafeBufferPointer(start: $0, count: w * 4)) }
        #expect(source.decodedBy != 0)
        #expect(pixels == (try decode(bytes, libjpegOnly: true)).pixels)
    }

    /// On one thread a 4:2:0 image stays with libjpeg-turbo, which is faster there (restart
    /// markers or not); so does progressive 4:2:0, which the two-thread decode leaves alone.
    @Test func whatTwoThreadsDoNotTakeStaysWithLibjpeg() throws {
        let yuv420 = Flavour(name: "4:2:0", lumaSampling: (2, 2))
        #expect(try decodeTelling(grainyJPEG(yuv420), threads: 1).decodedBy == 0)
        var restarts = yuv420
        restarts.restartRows = 4
        #expect(try decodeTelling(grainyJPEG(restarts), threads: 1).decodedBy == 0)
        #expect(try decodeTelling(grainyJPEG(Flavour(name: "progressive 4:2:0", lumaSampling: (2, 2), progressive: true)), threads: 2).decodedBy == 0)
        #expect(try decodeTelling(jpeg(yuv420, width: 203, height: 157), threads: 2).decodedBy == 0, "too small to be worth a thread")
    }

    /// Damage in either half (restart markers out of place, or bytes of garbage), or a cut, with and
    /// without restart markers: what libjpeg gives, pixels or its error, whichever thread met it.
    @Test(arguments: [0.2, 0.45, 0.55, 0.8, 0.999], [0, 1])
    func damageOnTwoThreadsGivesWhatLibjpegGives(at fraction: Double, restartRows: Int) throws {
        let whole = try grainyJPEG(Flavour(name: "4:2:0", lumaSampling: (2, 2), restartRows: restartRows))
        let at = Int(Double(whole.count) * fraction)
        var markers = whole, garbage = whole
        for i in at..<min(at + 24, whole.count - 2) {
            markers[i] = i % 2 == 0 ? 0xFF : 0xD3
            garbage[i] = UInt8(truncatingIfNeeded: i &* 131)
        }
        for damaged in [markers, garbage, Array(whole[..<at])] {
            func outcome(_ libjpegOnly: Bool) -> String {
                do {
                    let decoded = try decode(damaged, libjpegOnly: libjpegOnly, threads: 2)
                    return "\(decoded.width)×\(decoded.height) \(decoded.pixels.hashValue)"
                } catch {
                    return "\(error)"
                }
            }
            #expect(outcome(false) == outcome(true), "damage at \(at) of \(whole.count)")
        }
    }
}
