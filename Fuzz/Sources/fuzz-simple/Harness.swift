import FuzzSupport
@testable import ThumbcacheImaging  // the parsers under test are package API (Tools/fuzz builds with -enable-testing)

/// The parsers of our own: the input's first byte picks BMP, ICO, Netpbm or TGA, the rest is the
/// file, through the same paths a worker runs.
let harnesses: [ImageHarness] = [ImageFormat.bmp, .ico, .pnm, .tga].map { format in
    ImageHarness(format: format, decoders: ImageDecoders([.bmp, .ico, .cur, .pnm, .tga]))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    guard count > 0 else { return 0 }
    harnesses[Int(data[0]) % harnesses.count].run(data + 1, count - 1)
    return 0
}
