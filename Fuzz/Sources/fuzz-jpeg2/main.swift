import FuzzSupport
@testable import ThumbcacheImaging  // ImageFormat's members are package API (Tools/fuzz builds with -enable-testing)

let harness = ImageHarness(format: .jpeg, threads: 2)

/// Any bytes through the JPEG shim as a one-file call's worker decodes them, on two threads: the
/// guessed cut and the cut at a restart marker, from a file and from memory (ImageHarness).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    harness.runOnTwoThreads(data, count)
    return 0
}
