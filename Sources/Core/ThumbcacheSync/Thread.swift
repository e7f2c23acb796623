#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts a joinable OS thread running `body`.
package func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { arg in
        Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue().body()
        return nil
    }, box)
    precondition(rc == 0, "pthread_create failed: \(rc)")
    return thread
}
