import Foundation
import Synchronization
import Testing
import ThumbcacheCodecs
import ThumbcacheImaging
import ThumbcacheTestSupport
@testable import Thumbcache
@testable import ThumbcacheWorker

/// How a pool starts its families' workers, and how a worker that cannot serve is named
/// (SandboxTests.swift has the hostile files and the families).
extension SandboxTests {
    /// A batch pool starts each family's workers once: threads that bring the family's first
    /// files at the same moment share the workers started, instead of each starting a full set.
    @Test func threadsStartingAFamilyTogetherStartItOnce() throws {
        let dir = TemporaryDirectory()
        let paths = try (0..<8).map { try dir.write("p\($0).png", ImageEncoder.png(testPhoto(width: 64 + $0, height: 48))) }
        let box = ThumbnailOptions(maxWidth: 32, maxHeight: 32)
        for _ in 0..<3 {
            let pool = WorkerPool(.init(workers: 2, startsAllAtOnce: true))
            DispatchQueue.concurrentPerform(iterations: paths.count) { i in
                _ = try? pool.thumbnail(ofFileAt: paths[i], options: box, format: nil)
            }
            // The second starts beside the first file's decoding: wait for it, then it is the last.
            for _ in 0..<600 where pool.workersStarted < 2 { usleep(50_000) }
            #expect(pool.workersStarted == 2)
            pool.close()
        }
    }

    /// A batch pool's first file does not wait for the rest of its family's workers: they start
    /// on a thread of their own while it decodes. Here every start after the first is held at a
    /// gate the test opens only once the first file's thumbnail is back.
    @Test func aBatchPoolsFirstFileDoesNotWaitForItsOtherWorkers() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("p.png", ImageEncoder.png(testPhoto(width: 64, height: 48)))
        let (gate, first) = (dir.appending("gate"), dir.appending("first"))
        let text = try dir.write("gated-worker.sh", Array("""
            #!/bin/sh
            # The first start goes straight on; the others wait for the gate.
            if ! mkdir '\(first)' 2>/dev/null; then
                while [ ! -e '\(gate)' ]; do sleep 0.02; done
            fi
            exec '\(ChildProcess.productsDirectory)/thumbcache-worker' "$@"
            """.utf8))
        // Installed by another process: a program this one starts meanwhile (tests run side by
        // side) could inherit a descriptor open for writing on the file, and `exec` of it would
        // then fail with ETXTBSY for as long as that program ran.
        let script = dir.appending("gated-worker")
        try FixtureTools.run("/usr/bin/install", ["-m", "755", text, script])
        let pool = WorkerPool(.init(executable: script, workers: 3, startsAllAtOnce: true))
        let opened = { FileManager.default.createFile(atPath: gate, contents: Data()) }
        defer {
            _ = opened()
            pool.close()
        }
        let made = Mutex<RGBAImage?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let image = try? pool.thumbnail(ofFileAt: path, options: ThumbnailOptions(maxWidth: 32, maxHeight: 32), format: nil).image
            made.withLock { $0 = image }
            done.signal()
        }
        // A bound for a failure only. Had the first file waited for the other starts, it would
        // have come back only once each had given up on its hello (10 s), never to start.
        #expect(done.wait(timeout: .now() + 60) == .success, "the first file waited for the other workers to start")
        #expect(made.withLock { $0?.width } == 32)
        #expect(pool.workersStarted == 1)
        _ = opened()
        for _ in 0..<600 where pool.workersStarted < 3 { usleep(50_000) }
        #expect(pool.workersStarted == 3, "the others were still starting, and started once the gate opened")
    }

    func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// A worker program of another build (a hello this build cannot read, or of another protocol
    /// version) is refused with words that say so, not as a start that failed for no reason.
    @Test func aWorkerOfAnotherBuildIsNamedAsSuch() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("p.png", ImageEncoder.png(testPhoto(width: 64, height: 48)))
        let unreadable = Array("not a hello".utf8)
        let otherVersion = WorkerCoding.encode(WorkerReply(hello: .init(version: WorkerProtocol.version + 7, layers: [], error: nil)))
        for (name, document, expected) in [("unreadable", unreadable, "a hello this thumbcache cannot read"),
                                           ("other-version", otherVersion, "speaks protocol version \(WorkerProtocol.version + 7)")] {
            let frame = try dir.write(name + ".frame", le32(document.count) + le32(0) + document)
            let text = try dir.write(name + ".sh", Array("#!/bin/sh\ncat '\(frame)' >&3\nexec sleep 10\n".utf8))
            let script = dir.appending(name)
            try FixtureTools.run("/usr/bin/install", ["-m", "755", text, script])
            let pool = WorkerPool(.init(executable: script, workers: 1))
            defer { pool.close() }
            #expect {
                _ = try pool.thumbnail(ofFileAt: path, options: ThumbnailOptions(maxWidth: 32, maxHeight: 32), format: nil)
            } throws: { error in
                "\(error)".contains(expected) && "\(error)".contains("another build")
            }
        }
    }

    @Test func aWorkersEndIsPutIntoWords() {
        let abort = Int32(SIGABRT)
        #expect(WorkerPool.reason(status: abort, standardError: "Fatal error: could not allocate memory", memoryLimit: 1 << 30)
                == .exceededMemory(bytes: 1 << 30))
        #expect(WorkerPool.reason(status: abort, standardError: "", memoryLimit: 1 << 30) == .crashed(signal: abort))
        #expect(WorkerPool.reason(status: Int32(SIGKILL), standardError: "", memoryLimit: 1 << 30) == .killed(signal: Int32(SIGKILL)))
        #expect(WorkerPool.reason(status: 3 << 8, standardError: "", memoryLimit: 1 << 30) == .exited(status: 3))
        #expect(!WorkerFailure(path: "p", reason: .killed(signal: Int32(SIGKILL))).isContentFault)
        #expect(WorkerFailure(path: "p", reason: .timedOut(seconds: 20)).isContentFault)
    }
}

extension SandboxTests {
    /// A confined worker given two decode threads (a one-file call's) decodes a large JPEG at 1/8 on
    /// both: its second thread moves itself off the first's CPU (`tc_start_thread_beside`), which
    /// its system-call filter allows for the calling thread alone. The pixels are one thread's.
    @Test func aConfinedWorkerDecodesAtOneEighthOnTwoThreads() throws {
        let dir = TemporaryDirectory()
        var image = testPhoto(width: 1600, height: 1200)
        var state: UInt32 = 2_463_534_242
        for i in image.pixels.indices where i % 4 != 3 {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            image.pixels[i] = UInt8(clamping: Int(image.pixels[i]) + Int(state >> 27) - 16)
        }
        let bytes = try ImageEncoder.jpeg(image, quality: 85)
        #expect(bytes.count > 1 << 17, "the data must be over the two-thread decode's 128 KiB")
        let path = try dir.write("grainy.jpg", bytes)
        let box = ThumbnailOptions(maxWidth: 64, maxHeight: 64)  // 1600 / 64 = 25: decoded at 1/8
        let two = WorkerPool(.init(workers: 1, decodeThreads: 2))
        defer { two.close() }
        let one = WorkerPool(.init(workers: 1, decodeThreads: 1))
        defer { one.close() }
        let (a, b) = (try two.thumbnail(ofFileAt: path, options: box, format: nil).image, try one.thumbnail(ofFileAt: path, options: box, format: nil).image)
        #expect(a.width == 64 && a == b)
        #expect(try two.confinement(of: .images).layers.contains("seccomp"))
    }
}
