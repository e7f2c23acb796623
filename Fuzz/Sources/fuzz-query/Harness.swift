import Foundation
import ThumbcacheIndex

let parser = QueryParser(now: Date(timeIntervalSince1970: 1_700_000_000), calendar: Calendar(identifier: .gregorian))

/// Any text as a Spotlight query: the parser must answer with an expression or a positioned error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    do {
        _ = try parser.parse(text)
    } catch {
        precondition(error.position >= 0 && error.position <= text.count, "error position \(error.position) outside the query")
        _ = error.description
    }
    return 0
}
