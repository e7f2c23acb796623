import Thumbcache
@testable import ThumbcacheImaging  // the parsers under test are package API (Tools/fuzz builds with -enable-testing)

let types = ContentTypeRegistry()

/// Any bytes as a file's start, with a name taken from the input's first bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    let split = bytes.firstIndex(of: 0) ?? min(bytes.count, 8)
    let name = String(decoding: bytes[..<split], as: UTF8.self)
    let head = Array(bytes[min(split + 1, bytes.count)...].prefix(4096))
    let type = types.type(of: head, name: name)
    precondition(types.declaration(of: type) != nil, "sniffed an undeclared type \(type)")
    _ = types.tree(of: type)
    _ = types.type(forFilename: name)
    _ = ImageFormat.detect(head.withUnsafeBytes { $0 })
    // Every sniffer of the catalogue (SVG's root element, icon directories, TGA headers, raw IFDs).
    head.withUnsafeBytes { raw in
        for signature in FormatCatalogue.all { _ = signature.sniffer?.test(raw) }
        _ = CameraRaw.format(of: raw)
    }
    return 0
}
