#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A reader-writer lock: every transaction holds it shared; changing the map size holds it
/// exclusively, because LMDB remaps the file and views from open transactions would dangle.
///
/// `@unchecked Sendable`: a pthread rwlock is made to be shared between threads; the pointer is
/// allocated once and never reassigned.
final class ResizeLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        // Reader preference (the default) lets a thread that holds a read transaction open another.
        precondition(pthread_rwlock_init(lock, nil) == 0, "pthread_rwlock_init failed")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() { precondition(pthread_rwlock_rdlock(lock) == 0) }
    func lockExclusive() { precondition(pthread_rwlock_wrlock(lock) == 0) }
    func unlock() { precondition(pthread_rwlock_unlock(lock) == 0) }
}
