/// Which requests are running and which are cancelled. A cancellation is dropped when its
/// request ends; those of requests not running are kept up to a bound, oldest (lowest id) first out.
package struct RequestStates {
    package static let maxIdleCancellations = 256
    private(set) var running: [UInt64: Int] = [:]
    private(set) var cancelled: Set<UInt64> = []

    mutating func begin(_ id: UInt64) { running[id, default: 0] += 1 }

    mutating func end(_ id: UInt64) {
        guard let n = running[id] else { return }
        if n > 1 { running[id] = n - 1; return }
        running[id] = nil
        cancelled.remove(id)
    }

    mutating func cancel(_ id: UInt64) {
        cancelled.insert(id)
        let idle = cancelled.filter { running[$0] == nil }
        if idle.count > Self.maxIdleCancellations, let oldest = idle.min() { cancelled.remove(oldest) }
    }
}

/// Identical generations in flight share one task.
actor InFlight {
    private var tasks: [ThumbnailKey: Task<ThumbnailRepresentation, any Error>] = [:]

    func run(_ key: ThumbnailKey, _ make: @escaping @Sendable () async throws -> ThumbnailRepresentation) async throws -> ThumbnailRepresentation {
        if let running = tasks[key] { return try await running.value }
        let task = Task { try await make() }
        tasks[key] = task
        let result = await task.result
        tasks[key] = nil
        return try result.get()
    }
}
