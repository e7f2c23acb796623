// fulltext-compare DIR
//
// thumbcache's full-text index on the texts in DIR/texts (N.txt, one document each) and the
// queries in DIR/queries.json ({"class": [query words…]}): indexes them into DIR/index (the
// files' items first, untimed; then the texts in batches of about 8 MB, as a warm writes them,
// timed with the final sync), compacts it (timed apart), measures the full-text databases' bytes
// (the postings apart from the stored texts), and runs each query
// for the ten best documents (5 warm-up runs, then the median of 21). Prints one JSON object.
// Tools/compare-fulltext runs it beside SQLite FTS5 and Xapian on the same texts and queries.
import Foundation
import ThumbcacheIndex

let args = CommandLine.arguments
guard args.count == 2 else {
    FileHandle.standardError.write(Data("usage: fulltext-compare DIR\n".utf8))
    exit(2)
}
let dir = args[1]
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/texts").filter { $0.hasSuffix(".txt") }
    .sorted { Int($0.dropLast(4))! < Int($1.dropLast(4))! }
/// THUMBCACHE_REUSE_INDEX=1: query the index a previous run left (for profiling the queries).
let reuse = ProcessInfo.processInfo.environment["THUMBCACHE_REUSE_INDEX"] == "1"
if !reuse { try? FileManager.default.removeItem(atPath: dir + "/index") }
let index = try MetadataIndex.open(directory: dir + "/index", durability: .deferred)

/// A document's content key: its number, spread over 16 bytes.
@MainActor func hash(_ n: Int) -> [UInt8] {
    var h = [UInt8](repeating: 0, count: 16)
    withUnsafeBytes(of: UInt64(n).bigEndian) { for i in 0..<8 { h[i] = $0[i] } }
    h[15] = 1
    return h
}

var items: [FileItem] = []
for (i, name) in names.enumerated() {
    let n = Int(name.dropLast(4))!
    items.append(FileItem(path: dir + "/texts/" + name, state: IndexedFileState(size: 1, modificationTime: 1, changeTime: 1, inode: UInt64(i), device: 1),
                          contentHash: hash(n), attributes: [:]))
}
if !reuse { _ = try index.indexFiles(items) }

var indexing: UInt64 = 0
var textBytes = 0
var batch: [(content: [UInt8], text: [UInt8])] = []
var batchBytes = 0
/// THUMBCACHE_TEXT_BATCH_MB: the texts indexed per transaction (8 MB, as a warm writes them).
let batchLimit = (ProcessInfo.processInfo.environment["THUMBCACHE_TEXT_BATCH_MB"].flatMap(Int.init) ?? 8) << 20
@MainActor func flush() throws {
    let t0 = now()
    _ = try index.indexTexts(batch)
    indexing += now() - t0
    batch = []
    batchBytes = 0
}
for name in names where !reuse {
    let text = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/texts/" + name)))
    textBytes += text.count
    batch.append((hash(Int(name.dropLast(4))!), text))
    batchBytes += text.count
    if batchBytes >= batchLimit { try flush() }
}
if !batch.isEmpty { try flush() }
// Timed apart: FTS5 runs with synchronous=OFF, so the comparison with it is of indexing alone; the
// fsync that makes ours durable is reported beside it (Xapian's time includes its own).
let t0 = now()
try index.sync()
let syncing = Double(now() - t0) / 1e9
// Compacted, as the peers are (FTS5 'optimize', xapian-compact): postings rewritten into full pages.
var compaction = 0.0
if !reuse {
    let c = try index.compactText()
    compaction = c.seconds
}
let stats = try index.statistics()
let textStoreBytes = stats.databaseBytes["texts"] ?? 0
let indexBytes = textStoreBytes + (stats.databaseBytes["words"] ?? 0)

let queries = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/queries.json"))) as! [String: [String]]

/// The query in the Spotlight grammar: each space-separated term a kMDItemTextContent
/// predicate (a quoted phrase stays one), all of them required.
func spotlight(_ q: String) -> String {
    if q.hasPrefix("\"") { return "kMDItemTextContent == \"\(q.dropFirst().dropLast())\"cd" }
    return q.split(separator: " ").map { "kMDItemTextContent == \"\($0)\"cd" }.joined(separator: " && ")
}

var classes: [String: [[String: Any]]] = [:]
/// THUMBCACHE_WARMUPS: runs of each query before the timed ones (5; more to profile under perf).
let warmups = ProcessInfo.processInfo.environment["THUMBCACHE_WARMUPS"].flatMap(Int.init) ?? 5
/// THUMBCACHE_QUERY_CLASS: run only this class (for profiling one).
let onlyClass = ProcessInfo.processInfo.environment["THUMBCACHE_QUERY_CLASS"]
for (name, list) in queries where onlyClass == nil || onlyClass == name {
    var out: [[String: Any]] = []
    for q in list {
        let query = spotlight(q)
        let options = SearchOptions(limit: 10)
        var results = try index.search(query, options: options)
        for _ in 0..<warmups { results = try index.search(query, options: options) }
        var times: [Double] = []
        for _ in 0..<21 {
            let t = now()
            results = try index.search(query, options: options)
            times.append(Double(now() - t) / 1e6)
        }
        times.sort()
        let top = results.results.compactMap { $0.path.flatMap { Int(($0 as NSString).lastPathComponent.dropLast(4)) } }
        out.append(["query": q, "ms": times[times.count / 2], "count": results.count, "top": top])
    }
    classes[name] = out
}
let object: [String: Any] = ["documents": names.count, "text_bytes": textBytes, "index_s": Double(indexing) / 1e9, "sync_s": syncing,
                             "index_bytes": indexBytes, "compact_s": compaction, "postings_bytes": stats.databaseBytes["words"] ?? 0,
                             "queries": classes]
print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
