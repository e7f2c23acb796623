import Dispatch

/// Work started on a helper thread now, whose answer the starting thread takes later.
package final class HelperWork<T: Sendable>: Sendable {
    private let answer = ConditionLockedState<Result<T, any Error>?>(nil)

    package init(_ body: @escaping @Sendable () throws -> T) {
        DispatchQueue.global(qos: .userInitiated).async { [answer] in
            let result = Result(catching: body)
            answer.withLock { $0 = result }
        }
    }

    /// Waits for the answer. Take it exactly once, also when giving up on it: the work may be
    /// using something the caller is about to end (a transaction, say).
    package func result() throws -> T {
        try answer.withLock(waitingUntil: { if case .some = $0 { true } else { false } }) { $0.take()! }.get()
    }
}
