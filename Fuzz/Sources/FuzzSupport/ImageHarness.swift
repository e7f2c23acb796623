@testable import ThumbcacheImaging  // the parsers under test are package API (Tools/fuzz builds with -enable-testing)

/// What the image harnesses do with an input: the in-memory decoder (PNG, JPEG), then the
/// streaming thumbnail and header paths a worker runs on a descriptor (and, for JPEG, the
/// embedded EXIF preview).
public struct ImageHarness: Sendable {
    let input = InputFile()
    let format: ImageFormat
    let decoders: ImageDecoders
    /// Small limits, so that valid but huge headers are refused at once instead of decoded.
    let options = ThumbnailOptions(maxWidth: 32, maxHeight: 32, limits: DecodeLimits(maxPixels: 1 << 22, maxBufferedPixels: 1 << 20))

    /// `threads`: the decode threads a one-file call's worker gets (2 reaches JPEG's two-thread decodes).
    public init(format: ImageFormat, decoders: ImageDecoders = .standard, threads: Int = 1) {
        self.format = format
        var decoders = decoders
        decoders.settings = DecodeSettings(threads: threads)
        self.decoders = decoders
    }

    public func run(_ data: UnsafePointer<UInt8>, _ count: Int) {
        let bytes = UnsafeRawBufferPointer(start: data, count: count)
        if format == .png { _ = try? ImageDecoder.png(Array(bytes), maxPixels: 1 << 20) }
        if format == .jpeg { _ = try? ImageDecoder.jpeg(Array(bytes), maxPixels: 1 << 20) }
        input.write(bytes)
        _ = try? Thumbnailer.thumbnail(ofDescriptor: input.descriptor, name: "input", options: options, format: format, decoders: decoders)
        _ = try? Thumbnailer.info(ofDescriptor: input.descriptor, name: "input", format: format, decoders: decoders)
        if format == .jpeg { _ = try? Thumbnailer.embeddedThumbnail(ofDescriptor: input.descriptor, name: "input") }
    }

    /// A JPEG at 1/8 on two threads: the thumbnail from a descriptor (the second thread reads the
    /// file itself) and the rows from memory. Only inputs of 128 KiB or more are split.
    public func runOnTwoThreads(_ data: UnsafePointer<UInt8>, _ count: Int) {
        let bytes = UnsafeRawBufferPointer(start: data, count: count)
        input.write(bytes)
        _ = try? Thumbnailer.thumbnail(ofDescriptor: input.descriptor, name: "input", options: options, format: format, decoders: decoders)
        guard let source = try? JPEGSource(bytes: Array(bytes), path: "input", threads: 2),
              let (width, height) = try? source.start(shrink: 8, fast: true), width * height <= 1 << 20 else { return }
        _ = try? source.readRows { _ in }
    }
}
