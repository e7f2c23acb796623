import FuzzSupport
@testable import ThumbcacheImaging  // ImageFormat's members are package API (Tools/fuzz builds with -enable-testing)

let harness = ImageHarness(format: .jpeg)

/// Any bytes through the JPEG shim (ImageHarness says which paths).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    harness.run(data, count)
    return 0
}
