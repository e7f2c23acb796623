import FuzzSupport
import ThumbcacheImaging

let input = InputFile()
/// Small limits, so that valid but huge headers are refused at once instead of decoded.
let options = ThumbnailOptions(maxWidth: 32, maxHeight: 32, limits: DecodeLimits(maxPixels: 1 << 22, maxBufferedPixels: 1 << 20))

/// Any bytes through the JPEG shim: the in-memory decoder (EXIF previews) and the streaming
/// thumbnail path a worker runs on a descriptor (header, limits, rows, EXIF, orientation).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    _ = try? ImageDecoder.jpeg(Array(bytes), maxPixels: 1 << 20)
    input.write(bytes)
    _ = try? Thumbnailer.thumbnail(ofDescriptor: input.descriptor, name: "input", options: options, format: .jpeg)
    _ = try? Thumbnailer.info(ofDescriptor: input.descriptor, name: "input", format: .jpeg)
    _ = try? Thumbnailer.embeddedThumbnail(ofDescriptor: input.descriptor, name: "input")
    return 0
}

