@testable import ThumbcacheImaging  // the parsers under test are package API (Tools/fuzz builds with -enable-testing)

/// Any bytes as an EXIF block (TIFF header, IFD chains, offsets, rationals, GPS, the IFD1 preview range).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    if let exif = EXIFData.parse(UnsafeRawBufferPointer(start: data, count: count)), let range = exif.thumbnailRange {
        // The preview range must lie inside the block: the JPEG path slices it out.
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "thumbnail range \(range) outside \(count) bytes")
    }
    return 0
}
