import FuzzSupport
@testable import ThumbcacheImaging  // TIFFLZW is package API (Tools/fuzz builds with -enable-testing)

/// TIFF's LZW decoder on hostile codes: the first two bytes are the strip's size (what the
/// decoder must make), the rest its codes. It must stay inside its buffers and fail or finish.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    guard count > 2 else { return 0 }
    let size = Int(data[0]) << 8 | Int(data[1])
    let output = UnsafeMutablePointer<UInt8>.allocate(capacity: size + TIFFLZW.slack)
    output.initialize(repeating: 0, count: size + TIFFLZW.slack)
    defer { output.deallocate() }
    _ = try? TIFFLZW().decode(UnsafeRawBufferPointer(start: data + 2, count: count - 2), into: output, count: size)
    return 0
}
