@testable import ThumbcacheImaging  // the parsers under test are package API (Tools/fuzz builds with -enable-testing)

/// Any bytes as a HEIF or AVIF container: boxes, item locations (in the file and in idat),
/// properties, references, a grid's descriptor. Every range it hands out must lie inside the bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    guard let container = try? HEIFContainer(bytes) else { return 0 }
    for (id, item) in container.items {
        for e in (try? container.extents(of: id)) ?? [] { precondition(e.lowerBound >= 0 && e.upperBound <= count, "extent \(e) of \(count)") }
        for p in container.properties(of: id) {
            if case .hvcC(let r) = p.property { precondition(r.upperBound <= count, "hvcC \(r) of \(count)") }
        }
        if item.type == "grid", let grid = try? container.grid(id, in: bytes) {
            precondition(grid.tiles.count == grid.rows * grid.columns, "grid of \(grid.tiles.count) tiles")
        }
    }
    _ = container.topLevelImageCount
    return 0
}
