import Dispatch
import Synchronization

/// Waits on the calling thread for async work: for a thread that is not one of Swift's
/// cooperative pool (C's, in the C API; one of the daemon's own), where a blocked thread could
/// starve the work it waits for.
package func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    Task.detached {
        let result: Result<T, any Error>
        do { result = .success(try await work()) } catch { result = .failure(error) }
        outcome.value.withLock { $0 = result }
        outcome.done.signal()
    }
    outcome.done.wait()
    return try outcome.value.withLock { $0! }.get()
}

/// What `waitFor`'s task hands back to the waiting thread.
private final class Outcome<T: Sendable>: Sendable {
    let value = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
}
