import CThumbcacheTestProcess
import Foundation
import Testing
import ThumbcacheSync
import ThumbcacheTestSupport
@testable import ThumbcacheWorker

/// The pieces of a worker forked at its program's start (``EarlyWorker``): the arguments it is
/// sent later, and where a forked worker runs while it starts.
struct EarlyWorkerTests {
    /// Through a real pipe, as the child reads them: each argument back (an empty one too), and
    /// nothing once the writer closed without sending any (its program did not need it).
    @Test func argumentsComeBackWholeAndAClosedPipeMeansNone() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let sent = ["--memory", "1073741824", "", "--expect", "pdf", "--prepared-filter", "ü ß"]
        #expect(WorkerProtocol.argumentsMessage(sent).withUnsafeBytes { writeFully(ends[1], $0) } == nil)
        #expect(WorkerProtocol.readArguments(from: ends[0]) == sent)
        close(ends[1])
        #expect(WorkerProtocol.readArguments(from: ends[0]) == nil)
        close(ends[0])
    }

    /// A message cut short (its writer died mid-way) is none, not a part taken for the whole.
    @Test func aCutMessageIsNone() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let message = WorkerProtocol.argumentsMessage(["--memory", "1073741824"])
        #expect(Array(message.dropLast(3)).withUnsafeBytes { writeFully(ends[1], $0) } == nil)
        close(ends[1])
        #expect(WorkerProtocol.readArguments(from: ends[0]) == nil)
        close(ends[0])
    }

    /// An early worker that died before it was taken (its arguments' pipe has no reader): the
    /// writes fail instead of ending this process with SIGPIPE, and its hello says it did not start.
    @Test func aWorkerThatDiedBeforeItWasTakenFailsItsHello() throws {
        var channel: [Int32] = [-1, -1], errors: [Int32] = [-1, -1], arguments: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &channel) == 0)
        #expect(pipe(&errors) == 0 && pipe(&arguments) == 0)
        // The child's ends, closed as its death would close them.
        [channel[1], errors[1], arguments[0]].forEach { close($0) }
        let dead = try ChildProcess(program: "/bin/true", arguments: [])
        _ = dead.wait(timeout: 10)
        WorkerFork.keepEarly(EarlyWorker(pid: dead.processIdentifier, family: .documents, channel: channel[0], errors: errors[0], arguments: arguments[1]))
        let fork = WorkerFork(families: [.documents], sendFilter: { _, _, descriptor in
            _ = [UInt8](repeating: 0, count: 64).withUnsafeBytes { writeFully(descriptor, $0) }
        }) { _, _ in exit(0) }
        let worker = try WorkerProcess.fork(WorkerPool.Configuration(workers: 1), fork, family: .documents)
        #expect(WorkerFork.hasEarly(.documents) == false, "the early worker was not taken")
        #expect(throws: WorkerFailure.Reason.self) { try worker.readHello() }
    }

    /// A thread started beside its creator (a decode's second half) may not use the creator's CPU
    /// (Linux put it there, where the two took turns), where there is another.
    @Test func aThreadStartedBesideItsCreatorUsesTheOtherCPUs() throws {
        var (creator, thread): (Int32, Int32) = (0, 0)
        #expect(ctest_thread_beside_cpus(&creator, &thread) == 0)
        #expect(thread == (creator > 1 ? creator - 1 : creator), "\(creator) CPUs, the thread \(thread)")
    }

    /// A forked worker starts on the CPUs its parent is not on (Linux put it on the parent's,
    /// where the two took turns), and may use all of them once started.
    @Test func aForkedWorkerStartsBesideItsParentThenMayUseEveryCPU() throws {
        var (parent, atStart, started): (Int32, Int32, Int32) = (0, 0, 0)
        #expect(ctest_forked_worker_cpus(&parent, &atStart, &started) == 0)
        #expect(started == parent)
        #expect(atStart == (parent > 1 ? parent - 1 : parent), "\(parent) CPUs, the child started on \(atStart)")
    }
}
