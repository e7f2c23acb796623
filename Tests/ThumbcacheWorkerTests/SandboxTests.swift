import Foundation
import Synchronization
import Testing
import ThumbcacheCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// Hostile files against the real `thumbcache warm` with the test build's worker
/// (`thumbcache-test-worker`, whose extra decoders crash, hang, allocate, create files, connect
/// and exec): each costs exactly its file, with a clear reason, and nothing it tried happened.
@Suite(.serialized)
struct SandboxTests {
    /// A file the content sniffer takes for a PNG and the test worker's hostile decoder claims.
    static func hostile(_ action: String, _ argument: String = "") -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("TCHOSTILE:\(action):\(argument)\n".utf8)
    }

    static var testWorker: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["THUMBCACHE_WORKER"] = ChildProcess.productsDirectory + "/thumbcache-test-worker"
        return environment
    }

    static func warm(_ arguments: [String]) throws -> WarmReport {
        let child = try ChildProcess(program: "thumbcache", arguments: ["warm", "--json"] + arguments, environment: testWorker)
        let (end, stderr) = child.wait()
        #expect(end == .exited(0), "warm failed: \(stderr)")
        return try JSONDecoder().decode(WarmReport.self, from: Data(child.output.joined(separator: "\n").utf8))
    }

    @Test func eachHostileFileCostsOnlyItselfAndNothingItTriedHappens() throws {
        let dir = TemporaryDirectory()
        let tree = dir.appending("tree")
        try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
        let good = [try dir.write("tree/one.png", ImageEncoder.png(testPhoto(width: 300, height: 200))),
                    try dir.write("tree/two.jpg", ImageEncoder.jpeg(testPhoto(width: 320, height: 240)))]
        let listener = try LoopbackListener()
        let created = dir.appending("created-by-a-worker")
        let executed = dir.appending("touched-by-a-shell")
        let files = [
            "segv": try dir.write("tree/segv.png", Self.hostile("segv")),
            "spin": try dir.write("tree/spin.png", Self.hostile("spin")),
            "alloc": try dir.write("tree/alloc.png", Self.hostile("alloc")),
            "create": try dir.write("tree/create.png", Self.hostile("create", created)),
            "connect": try dir.write("tree/connect.png", Self.hostile("connect", String(listener.port))),
            "exec": try dir.write("tree/exec.png", Self.hostile("exec", executed)),
            "signal": try dir.write("tree/signal.png", Self.hostile("signal", String(getpid()))),
        ]
        Self.watchForSignal()
        let summary = try Self.warm([tree, "--cache", dir.appending("cache"), "--jobs", "2", "--timeout", "3", "--memory-limit", "512M"])

        #expect(summary.generated == good.count, "\(summary.failures)")
        let reasons = summary.reasons
        #expect(Set(reasons.keys) == Set(files.values), "\(summary.failures)")
        #expect(reasons[files["segv"]!] == "decoder crashed (SIGSEGV)")
        #expect(reasons[files["spin"]!] == "timed out after 3 s")
        #expect(reasons[files["alloc"]!] == "exceeded the decoder's memory limit of 512 MiB")
        #expect(reasons[files["create"]!]?.hasSuffix("creating \(created): Permission denied") == true, "\(reasons)")
        #expect(reasons[files["connect"]!]?.hasSuffix("opening a socket: Permission denied") == true, "\(reasons)")
        #expect(reasons[files["exec"]!] == "decoder tried a forbidden system call and was stopped (SIGSYS)")
        #expect(!FileManager.default.fileExists(atPath: created))
        #expect(!FileManager.default.fileExists(atPath: executed))
        #expect(!listener.wasReached)
        #expect(reasons[files["signal"]!] == "decoder tried a forbidden system call and was stopped (SIGSYS)")
        #expect(Self.signalled.load(ordering: .relaxed) == 0, "a worker signalled the test process")

        // The failures are remembered: a second warm does not start a decoder on them again.
        let again = try Self.warm([tree, "--cache", dir.appending("cache"), "--timeout", "3"])
        #expect(again.generated == 0)
        #expect(again.reasons.values.allSatisfy { $0.hasSuffix("(recorded earlier; --retry-failed tries again)") }, "\(again.failures)")
    }

    /// While a warm runs, every worker is confined; a worker killed from outside mid-file costs
    /// that file only, is not remembered as the file's fault, and a second warm makes it.
    @Test func workersAreConfinedAndAKilledWorkerCostsOnlyItsFile() throws {
        let dir = TemporaryDirectory()
        let slow = try dir.write("slow.png", Self.hostile("sleep", "2000"))
        let a = try dir.write("a.png", ImageEncoder.png(testPhoto(width: 200, height: 100)))
        let b = try dir.write("b.png", ImageEncoder.png(testPhoto(width: 100, height: 200)))
        let cache = dir.appending("cache")
        let child = try ChildProcess(program: "thumbcache", arguments: ["warm", "--json", "--jobs", "1", "--cache", cache, slow, a, b],
                                     environment: Self.testWorker)
        var workers: [pid_t] = []
        let deadline = Date().addingTimeInterval(10)
        while workers.isEmpty && Date() < deadline {
            workers = Self.children(of: child.processIdentifier)
            if workers.isEmpty { usleep(5_000) }
        }
        #expect(!workers.isEmpty, "no worker process appeared")
        for worker in workers {
            // A worker confines itself first thing after it starts; give it that moment.
            var status = ""
            let confined = Date().addingTimeInterval(5)
            repeat {
                status = (try? String(contentsOfFile: "/proc/\(worker)/status", encoding: .utf8)) ?? ""
                if !status.contains("Seccomp:\t2") { usleep(2_000) }
            } while !status.contains("Seccomp:\t2") && Date() < confined
            #expect(status.contains("Seccomp:\t2"), "\(status)")
            #expect(status.contains("NoNewPrivs:\t1"), "\(status)")
        }
        // The worker first reads slow.png's header for the index (quick), then sleeps 2 s in its
        // decoder: kill it once a thread of it is in that sleep (clock_nanosleep or nanosleep).
        let sleeping = Date().addingTimeInterval(10)
        while !workers.contains(where: Self.asleep) && Date() < sleeping { usleep(2_000) }
        #expect(workers.contains(where: Self.asleep), "the decoder never went to sleep")
        for worker in workers { kill(worker, SIGKILL) }
        let (end, stderr) = child.wait()
        #expect(end == .exited(0), "\(stderr)")
        let summary = try JSONDecoder().decode(WarmReport.self, from: Data(child.output.joined(separator: "\n").utf8))
        #expect(summary.generated == 2)
        #expect(summary.reasons == [slow: "decoder worker was killed from outside (SIGKILL)"])

        let second = try Self.warm(["--cache", cache, slow])
        #expect(second.generated == 1, "\(second.failures)")
    }

    /// Set by a SIGWINCH to this process (which only a hostile decoder sends here).
    static let signalled = Atomic<Int>(0)

    static func watchForSignal() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in SandboxTests.signalled.add(1, ordering: .relaxed) }
        sigaction(SIGWINCH, &action, nil)
    }

    /// The process ids whose parent is `pid`.
    /// A worker killed from outside while the index reads its file's header too: the item is
    /// indexed without its pixel size, provisionally, and the next warm fills it in (an item
    /// stayed without one for good: the soak found it).
    @Test func anItemIndexedWhileItsWorkerWasKilledIsCompletedByTheNextWarm() throws {
        let dir = TemporaryDirectory()
        let slow = try dir.write("slow.png", Self.hostile("sleepopen", "1500"))
        let cache = dir.appending("cache")
        let child = try ChildProcess(program: "thumbcache", arguments: ["warm", "--json", "--jobs", "1", "--cache", cache, slow],
                                     environment: Self.testWorker)
        // Every worker found asleep is killed: the thumbnail's decode, then the header read.
        var kills = 0
        let deadline = Date().addingTimeInterval(30)
        while Self.running(child.processIdentifier), Date() < deadline {
            for worker in Self.children(of: child.processIdentifier) where Self.asleep(worker) {
                kill(worker, SIGKILL)
                kills += 1
            }
            usleep(2_000)
        }
        let (end, stderr) = child.wait()
        #expect(end == .exited(0), "\(stderr)")
        #expect(kills >= 2, "the header was not read in a worker of its own: \(kills) kills")
        #expect(try Self.pixelWidth(of: slow, cache: cache) == nil)

        let second = try Self.warm(["--cache", cache, slow])
        #expect(second.generated == 1, "\(second.failures)")
        #expect(try Self.pixelWidth(of: slow, cache: cache) == 16)
    }

    /// The indexed pixel width of `path`, nil when the item has none.
    static func pixelWidth(of path: String, cache: String) throws -> Int? {
        let child = try ChildProcess(program: "thumbcache", arguments: ["search", "kMDItemFSSize >= 0", "--json", "--cache", cache,
                                                                        "--attr", "kMDItemPixelWidth"])
        let (end, stderr) = child.wait()
        #expect(end == .exited(0), "\(stderr)")
        let answer = try JSONSerialization.jsonObject(with: Data(child.output.joined(separator: "\n").utf8)) as? [String: Any]
        let results = answer?["results"] as? [[String: Any]] ?? []
        #expect(results.count == 1, "\(results)")
        return (results.first?["attributes"] as? [String: Any])?["kMDItemPixelWidth"] as? Int
    }

    /// Whether `pid` runs still (exists and is no zombie).
    static func running(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// Whether a thread of `pid` is asleep (clock_nanosleep or nanosleep).
    static func asleep(_ pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            let call = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8))?.split(separator: " ").first
            return call == "230" || call == "35"
        }
    }

    static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name -> pid_t? in
            guard let child = pid_t(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid ? child : nil
        }
    }

    /// Sandboxed and in-process decoding give the same thumbnails and metadata; a worker allowed
    /// two threads downscales beside its decoding, on a thread its confinement lets it start.
    @Test(arguments: ["png", "jpeg"], [1, 2])
    func sandboxedAndInProcessDecodingAgree(format: String, threads: Int) throws {
        let dir = TemporaryDirectory()
        let photo = testPhoto(width: 640, height: 480)
        let path = try dir.write("p." + format, format == "png" ? ImageEncoder.png(photo) : ImageEncoder.jpeg(photo))
        let pool = WorkerPool(.init(workers: 1, decodeThreads: threads))
        let local = InProcessDecoding()
        let options = ThumbnailOptions(maxWidth: 128, maxHeight: 128)
        let sandboxed = try pool.thumbnail(ofFileAt: path, options: options, format: nil)
        let inProcess = try local.thumbnail(ofFileAt: path, options: options, format: nil)
        #expect(sandboxed.image == inProcess.image)
        #expect(sandboxed.info == inProcess.info)
        #expect(try pool.info(ofFileAt: path, format: nil) == local.info(ofFileAt: path, format: nil))
        #expect(pool.workersStarted == 1)
        let broken = try dir.write("broken.png", Array(ImageEncoder.png(photo).prefix(200)))
        let error = #expect(throws: ImagingError.self) { try pool.thumbnail(ofFileAt: broken, options: options, format: nil) }
        #expect(error?.path == broken)
        #expect(pool.workersStarted == 1)  // a decoder error is an answer, not a failed worker
    }

    /// Each file goes to its family's worker (images, vector, documents, media), chosen by what its bytes
    /// say before the caller's guess: a PNG called text is decoded as a PNG, by the image worker.
    @Test func filesGoToTheirFamilysWorker() throws {
        let dir = TemporaryDirectory()
        let photo = testPhoto(width: 64, height: 48)
        let png = try dir.write("p.png", ImageEncoder.png(photo))
        let notes = try dir.write("notes.txt", Array("Hello, worker families.\n".utf8))
        // A second of 8 kHz mono 8-bit WAV: FFmpeg reads it; it has no cover to draw.
        let samples = 8000
        var wav = Array("RIFF".utf8) + le32(36 + samples) + Array("WAVEfmt ".utf8) + le32(16) + [1, 0, 1, 0] + le32(8000) + le32(8000) + [1, 0, 8, 0]
        wav += Array("data".utf8) + le32(samples) + [UInt8](repeating: 128, count: samples)
        let sound = try dir.write("tone.wav", wav)
        let pool = WorkerPool(.init(workers: 1))
        let box = ThumbnailOptions(maxWidth: 64, maxHeight: 64)
        _ = try pool.thumbnail(ofFileAt: png, options: box, format: .text)
        #expect(pool.familiesStarted == [.images])
        _ = try pool.thumbnail(ofFileAt: notes, options: box, format: .text)
        _ = try pool.thumbnail(ofFileAt: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", options: box, format: nil)
        #expect(pool.familiesStarted == [.images, .documents])
        #expect(pool.workersStarted == 2)
        _ = try? pool.info(ofFileAt: sound, format: nil)
        #expect(pool.familiesStarted == [.images, .documents, .media])
        #expect(pool.workersStarted == 3)
        let drawing = try dir.write("drawing", Array(TestPictures.flatSVG.replacingOccurrences(of: "SIZE", with: "width=\"40\" height=\"20\"")
            .replacingOccurrences(of: "IMAGE", with: "").utf8))
        #expect(try pool.thumbnail(ofFileAt: drawing, options: box, format: nil).info.format == .svg)
        #expect(pool.familiesStarted == [.images, .documents, .media, .vector])
        #expect(pool.workersStarted == 4)
    }

    /// A thumbnail request may bring the file's words along (one trip to the worker for both);
    /// a file whose words cannot be read still gets its thumbnail, and no words.
    @Test func aThumbnailBringsTheWordsAlong() throws {
        let dir = TemporaryDirectory()
        let notes = try dir.write("notes.txt", Array("Hello, worker families.\nA second line, and more words.\n".utf8))
        let png = try dir.write("p.png", ImageEncoder.png(testPhoto(width: 64, height: 48)))
        let pool = WorkerPool(.init(workers: 1))
        let box = ThumbnailOptions(maxWidth: 64, maxHeight: 64)
        let text = try pool.thumbnail(ofFileAt: notes, options: box, format: .text, wordsUpTo: 1000)
        #expect(text.words?.format == .text)
        #expect(text.words?.text == (try pool.text(ofFileAt: notes, format: .text, limit: 1000)).text)
        #expect(text.words?.text.contains("A second line") == true && text.image.height == 64)
        // The limit holds: at most that many bytes come back.
        let cut = try pool.thumbnail(ofFileAt: notes, options: box, format: .text, wordsUpTo: 10)
        #expect((cut.words?.text.utf8.count ?? 99) <= 10)
        let picture = try pool.thumbnail(ofFileAt: png, options: box, format: .png, wordsUpTo: 1000)
        #expect(picture.words == nil && picture.image.width == 64)
    }

    /// The image worker hands a HEIF it cannot decode directly (its colour stated as YCgCo, whose
    /// conversion is libheif's) to the heavy worker, which has libheif, and JPEG XL goes there from
    /// the start; a file handed on again, or to a family the image worker may not hand on to, is not followed.
    @Test func aFileHandedOnGoesToTheFamilyNamedOnce() throws {
        let dir = TemporaryDirectory()
        let clear = TestPictures.source(width: 96, height: 64, alpha: true)
        let ycgco = dir.appending("ycgco.heic")
        let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/make-heic-grid").path
        try FixtureTools.run("/usr/bin/python3", [tool, try dir.write("source.png", ImageEncoder.png(clear)), ycgco, "--tile", "64", "--matrix", "8"])
        #expect(WorkerFamily(rawValue: ImageDecoderRegistration.libheifFamily) == .heavy)
        let pool = WorkerPool(.init(workers: 1))
        let box = ThumbnailOptions(maxWidth: 64, maxHeight: 64)
        let made = try pool.thumbnail(ofFileAt: ycgco, options: box, format: nil)
        #expect(made.info.format == .heif && made.image.width == 64)
        #expect(pool.familiesStarted == [.images, .heavy] && pool.workersStarted == 2)
        #expect(try pool.info(ofFileAt: ycgco, format: nil).pixelWidth == 96)
        let jxl = try FixtureTools.fixture(dir, "photo.jxl", from: clear, "cjxl") { [$0, $1, "--quiet"] }
        let fresh = WorkerPool(.init(workers: 1))
        #expect(try fresh.thumbnail(ofFileAt: jxl, options: box, format: nil).info.format == .jpegXL)
        #expect(fresh.familiesStarted == [.heavy])
        // The test worker serves every family: a file that says "elsewhere" each time is followed once.
        let looping = try dir.write("loop.png", Self.hostile("elsewhere", WorkerFamily.heavy.rawValue))
        let testPool = WorkerPool(.init(executable: ChildProcess.productsDirectory + "/thumbcache-test-worker", workers: 1))
        let error = #expect(throws: ImagingError.self) { try testPool.thumbnail(ofFileAt: looping, options: box, format: nil) }
        #expect(error?.reason == .decodedElsewhere(by: "heavy") && error?.path == looping)
        #expect(testPool.workersStarted == 2)
        // Only the hand-offs a family may make are followed: the image worker's to FFmpeg's is not.
        let astray = try dir.write("astray.png", Self.hostile("elsewhere", WorkerFamily.media.rawValue))
        #expect(throws: ImagingError(path: astray, reason: .decodedElsewhere(by: "media"))) {
            try testPool.thumbnail(ofFileAt: astray, options: box, format: nil)
        }
        #expect(testPool.familiesStarted == [.images, .heavy])
    }

    /// A damaged HEIC in the confined image worker: libavcodec, loaded there at the first HEIC, says
    /// what it found through its return codes, never through a log that asks whether standard error
    /// is a terminal (an ioctl the filter kills the worker for).
    @Test func aDamagedHEICIsAnErrorFromTheConfinedWorkerNotAKill() throws {
        let dir = TemporaryDirectory()
        let heic = dir.appending("grid.heic")
        let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/make-heic-grid").path
        try FixtureTools.run("/usr/bin/python3", [tool, try dir.write("source.png", ImageEncoder.png(testPhoto(width: 256, height: 192))),
                                                  heic, "--tile", "64"])
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: heic)))
        // A tile's slice (an IDR unit, 0x28 0x01, after its 4-byte length) no longer says it is its
        // picture's first: libavcodec logs that a first slice is missing, and fails the tile.
        func isSlice(_ i: Int) -> Bool {
            guard bytes[i + 4] == 0x28, bytes[i + 5] == 1, bytes[i + 6] & 0x80 != 0 else { return false }
            let length = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            return length < bytes.count - i
        }
        let slice = try #require((0..<(bytes.count - 7)).first(where: isSlice))
        bytes[slice + 6] &= 0x7F
        let damaged = try dir.write("damaged.heic", bytes)
        let pool = WorkerPool(.init(workers: 1))
        let box = ThumbnailOptions(maxWidth: 64, maxHeight: 64)
        #expect(try pool.thumbnail(ofFileAt: heic, options: box, format: nil).image.width == 64)
        let error = #expect(throws: ImagingError.self) { try pool.thumbnail(ofFileAt: damaged, options: box, format: nil) }
        #expect("\(error?.reason as Any)".contains("libavcodec"), "\(String(describing: error))")
    }

    /// A pool that lives for hours lets idle workers go after ``WorkerPool/Configuration/idleExit``
    /// (their processes end), and the next file of their family starts another.
    @Test func idleWorkersEndAndTheNextFileStartsAnother() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("p.png", ImageEncoder.png(testPhoto(width: 64, height: 48)))
        let pool = WorkerPool(.init(workers: 1, idleExit: 0.3))
        let box = ThumbnailOptions(maxWidth: 32, maxHeight: 32)
        _ = try pool.thumbnail(ofFileAt: path, options: box, format: nil)
        #expect(pool.idleWorkers == 1)
        var waited = 0
        while pool.idleWorkers > 0 && waited < 100 {
            usleep(50_000)
            waited += 1
        }
        #expect(pool.idleWorkers == 0)
        _ = try pool.thumbnail(ofFileAt: path, options: box, format: nil)
        #expect(pool.workersStarted == 2 && pool.idleWorkers == 1)
    }
}
