// thumbcache-probe: a child process for the store's multi-process tests.
//
//   thumbcache-probe write DIR WRITER GROUPS GROUP_SIZE BYTES [MAP_SIZE]
//       Writes GROUPS atomic groups of GROUP_SIZE self-checking records through a group-commit
//       writer; prints "committed G" once group G is committed.
//   thumbcache-probe hold-reader DIR
//       Opens a read transaction and keeps it open; prints "holding", then waits to be killed.
//   thumbcache-probe open DIR
//       Opens the store; prints "stale-readers-cleared N".
//   thumbcache-probe compact-loop DIR
//       Compacts the cache over and over; prints "compacted G" after each switch to generation G.
//   thumbcache-probe index-batches DIR FIRST
//       Indexes batches FIRST, FIRST+1, … of 40 app items ("b<batch>-<i>") into the metadata index
//       at DIR, each with client state "<batch>"; prints "batch B" after each, until killed.
//   thumbcache-probe times SECONDS QUERY…
//       Prints, for each `$time…` expression, the seconds since 1970 it means at SECONDS in local
//       time ($TZ), or "nil"; its tests compare them with Foundation's calendar in the same zone.
//   thumbcache-probe read DIR SECONDS
//       Reads and verifies every record, over and over, for SECONDS; prints "passes N records M".
//
// Environment for `write`: PROBE_SYNC=1 flushes every commit (default: deferred);
// PROBE_DEFAULT_POLICY=1 uses the writer's default batching with no in-flight limit;
// PROBE_TIMING=1 prints the time to commit everything on standard error.
//
// Exit status: 0 on success, 1 on a failed check, 2 on bad arguments.
import Dispatch
import FoundationEssentials
import ThumbcacheIndex
import ThumbcacheLMDB
import ThumbcacheStore
import ThumbcacheTestSupport

#if canImport(Glibc)
import Glibc
#endif

func say(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(1, $0, strlen($0)) }
}

func fail(_ message: String, status: Int32 = 1) -> Never {
    let text = "thumbcache-probe: " + message + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

let args = CommandLine.arguments
guard args.count >= 3 else { fail("usage: thumbcache-probe write|read|hold-reader|open DIR …", status: 2) }

switch args[1] {
case "times":
    guard let now = Double(args[2]) else { fail("usage: thumbcache-probe times SECONDS QUERY…", status: 2) }
    let parser = QueryParser(now: Date(timeIntervalSince1970: now))
    for expression in args[3...] {
        guard case .comparison(_, _, .date(let t), _)? = try? parser.parse("a > " + expression) else { say("nil"); continue }
        say(String(t))
    }
case "index-batches":
    guard args.count >= 4, let first = Int(args[3]) else { fail("usage: thumbcache-probe index-batches DIR FIRST", status: 2) }
    let index: MetadataIndex
    do { index = try MetadataIndex.open(directory: args[2]) } catch { fail("\(error)") }
    var b = first
    while true {
        var batch = IndexBatch()
        batch.index((0..<40).map { i in
            SearchableItem(uniqueIdentifier: "b\(b)-\(i)", domainIdentifier: "probe",
                           attributes: ["kMDItemTitle": .string("batch \(b) item \(i)"), "batch": .number(Double(b))])
        })
        do { try index.perform(batch, clientState: Array("\(b)".utf8), client: "probe") } catch { fail("\(error)") }
        say("batch \(b)")
        b += 1
    }
case "write":
    guard args.count >= 7, let writer = UInt32(args[3]), let groups = UInt32(args[4]), let groupSize = Int(args[5]),
        let size = Int(args[6])
    else { fail("usage: thumbcache-probe write DIR WRITER GROUPS GROUP_SIZE BYTES [MAP_SIZE]", status: 2) }
    var options = ThumbnailStore.Options.probe
    if args.count >= 8, let mapSize = Int(args[7]) { options.mapSize = mapSize }
    if getenv("PROBE_SYNC") != nil { options.durability = .everyCommit }
    let started = DispatchTime.now().uptimeNanoseconds
    let store: ThumbnailStore
    do { store = try ThumbnailStore.open(directory: args[2], options: options) } catch { fail("\(error)") }
    let policy: GroupCommitWriter.Policy = getenv("PROBE_DEFAULT_POLICY") != nil ? .init() : .init(maxWrites: 64, maxDelay: 2_000_000)
    let committer = GroupCommitWriter(store: store, policy: policy)
    let inFlight = DispatchSemaphore(value: getenv("PROBE_DEFAULT_POLICY") != nil ? 100_000 : 64)
    let done = DispatchSemaphore(value: 0)
    for g in 0..<groups {
        inFlight.wait()
        committer.enqueue(ProbeRecords.writes(writer: writer, group: g, groupSize: groupSize, size: size)) { result in
            switch result {
            case .success: say("committed \(g)")
            case .failure(let error): fail("group \(g): \(error)")
            }
            inFlight.signal()
            if g == groups - 1 { done.signal() }
        }
    }
    done.wait()
    let committed = DispatchTime.now().uptimeNanoseconds
    committer.close()
    let closed = DispatchTime.now().uptimeNanoseconds
    if getenv("PROBE_TIMING") != nil {
        let text = "committed all in \((committed - started) / 1_000_000) ms, closed (synced) after \((closed - started) / 1_000_000) ms\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }

case "read":
    guard args.count >= 4, let seconds = Double(args[3]) else { fail("usage: thumbcache-probe read DIR SECONDS", status: 2) }
    let store: ThumbnailStore
    do { store = try ThumbnailStore.open(directory: args[2], options: .probe) } catch { fail("\(error)") }
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    var passes = 0
    var records = 0
    repeat {
        do {
            records = try store.forEachThumbnail { key, view in
                guard ProbeRecords.verify(key: key, data: view.data) else { fail("bad record \(key)") }
                return true
            }
        } catch {
            fail("\(error)")
        }
        passes += 1
    } while DispatchTime.now().uptimeNanoseconds < deadline
    say("passes \(passes) records \(records)")

case "compact-loop":
    let store: ThumbnailStore
    do { store = try ThumbnailStore.open(directory: args[2], options: .probe) } catch { fail("\(error)") }
    while true {
        do {
            let report = try store.compactFile()
            say("compacted \(report.generation)")
        } catch {
            fail("\(error)")
        }
    }

case "hold-reader":
    let store: ThumbnailStore
    do { store = try ThumbnailStore.open(directory: args[2], options: .probe) } catch { fail("\(error)") }
    _ = try? store.environment.read { _ in
        say("holding")
        while true { sleep(60) }
    }

case "open":
    do {
        let store = try ThumbnailStore.open(directory: args[2], options: .probe)
        say("stale-readers-cleared \(store.environment.staleReadersCleared)")
    } catch {
        fail("\(error)")
    }

default:
    fail("unknown command \(args[1])", status: 2)
}

extension ThumbnailStore.Options {
    /// A deliberately tiny initial map, so that concurrent processes keep growing it.
    static var probe: ThumbnailStore.Options { ThumbnailStore.Options(mapSize: 1 << 20, durability: .deferred) }
}
