// index-compare DIR [COUNT]
//
// Builds a metadata index of COUNT (default 1 000 000) IndexCorpus items in DIR/index, timing
// only the index calls; measures its size and the p50 of each IndexCorpus query (parse and
// evaluate to the full list of item numbers, 5 warm-up runs then 41 timed); writes DIR/items.tsv
// and DIR/queries.json for the SQLite side and prints one JSON object. Tools/compare-index runs it next to SQLite.
import Foundation
import IndexCorpus
import ThumbcacheIndex

let args = CommandLine.arguments
guard args.count >= 2 else {
    FileHandle.standardError.write(Data("usage: index-compare DIR [COUNT]\n".utf8))
    exit(2)
}
let dir = args[1]
let count = args.count >= 3 ? Int(args[2]) ?? IndexCorpus.million : IndexCorpus.million
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

try? FileManager.default.removeItem(atPath: dir + "/index")
try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
let index = try MetadataIndex.open(directory: dir + "/index", durability: .deferred)
let batch = 50_000
var ingest: UInt64 = 0
var start = 0
while start < count {
    let items = (start..<min(count, start + batch)).map(IndexCorpus.item)
    let t0 = now()
    _ = try index.indexFiles(items)
    ingest += now() - t0
    start += batch
}
let t0 = now()
try index.sync()
ingest += now() - t0
let stats = try index.statistics()

var queries: [[String: Any]] = []
let parser = QueryParser()
for (name, query, _) in IndexCorpus.queries {
    var times: [UInt64] = []
    var n = 0
    for run in 0..<46 {
        let t = now()
        let expression = try parser.parse(query)
        n = try index.matchingItemNumbers(expression).count
        if run >= 5 { times.append(now() - t) }
    }
    times.sort()
    queries.append(["name": name, "query": query, "count": n, "p50_ms": Double(times[times.count / 2]) / 1e6])
}

// The same items and queries for SQLite.
let sqlQueries = IndexCorpus.queries.map { ["name": $0.name, "sql": $0.sql] }
try JSONSerialization.data(withJSONObject: sqlQueries, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: dir + "/queries.json"))
if let out = FileHandle(forWritingAtPath: dir + "/items.tsv") ?? {
    FileManager.default.createFile(atPath: dir + "/items.tsv", contents: nil)
    return FileHandle(forWritingAtPath: dir + "/items.tsv")
}() {
    out.truncateFile(atOffset: 0)
    var chunk = ""
    for i in 0..<count {
        chunk += IndexCorpus.tsvLine(i)
        chunk += "\n"
        if chunk.utf8.count > 1 << 20 { out.write(Data(chunk.utf8)); chunk = "" }
    }
    out.write(Data(chunk.utf8))
    out.closeFile()
}

let result: [String: Any] = [
    "items": count,
    "ingest_s": Double(ingest) / 1e9,
    "items_per_s": Double(count) / (Double(ingest) / 1e9),
    "file_bytes": stats.fileBytes,
    "database_bytes": stats.databaseBytes,
    "index_bytes_per_item": stats.indexBytesPerItem,
    "total_bytes_per_item": Double(stats.fileBytes) / Double(count),
    "queries": queries,
]
print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
