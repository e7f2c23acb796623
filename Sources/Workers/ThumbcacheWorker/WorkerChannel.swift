#if canImport(Glibc)
import Glibc
#endif
import CThumbcacheDescriptors
import ThumbcacheSync

/// One end of the socket between the parent and a worker: framed reads and writes, with a
/// deadline on the parent's side (a worker that stops answering is killed, not waited for).
struct WorkerChannel {
    enum Failure: Error {
        case timedOut
        case closed
        case system(Errno)
    }

    let descriptor: Int32

    /// Sends all of `bytes`, with `attaching` riding along the first of them.
    func send(_ bytes: [UInt8], attaching fd: Int32 = -1) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { b in
                cdesc_send(descriptor, b.baseAddress! + sent, b.count - sent, sent == 0 ? fd : -1)
            }
            if n < 0 { throw errno == EPIPE || errno == ECONNRESET ? .closed : .system(.current) }
            sent += n
        }
    }

    /// Fills `buffer`; waits at most until `deadline` (monotonic ns; nil: forever).
    /// - Returns: a descriptor that came with the bytes, or -1.
    @discardableResult
    func receive(into buffer: UnsafeMutableRawBufferPointer, deadline: UInt64?) throws(Failure) -> Int32 {
        var got = 0
        var received: Int32 = -1
        while got < buffer.count {
            if let deadline { try wait(until: deadline) }
            var fd: Int32 = -1
            let n = cdesc_receive(descriptor, buffer.baseAddress! + got, buffer.count - got, &fd)
            if fd >= 0 {
                if received >= 0 { close(received) }  // one descriptor per frame; extras are closed
                received = fd
            }
            if n == 0 { if received >= 0 { close(received) }; throw .closed }
            if n < 0 {
                if received >= 0 { close(received) }
                throw errno == ECONNRESET ? .closed : .system(.current)
            }
            got += n
        }
        return received
    }

    func receive(count: Int, deadline: UInt64?) throws(Failure) -> [UInt8] {
        var failure: Failure?
        // Not zeroed first: a page's pixels are megabytes, and the socket fills every byte (or
        // the array is dropped with the failure).
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(Failure) { try receive(into: UnsafeMutableRawBufferPointer(buffer), deadline: deadline) } catch { failure = error }
            initialized = count
        }
        if let failure { throw failure }
        return bytes
    }

    private func wait(until deadline: UInt64) throws(Failure) {
        while true {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { throw .timedOut }
            var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
            let r = poll(&p, 1, ms)
            if r > 0 { return }
            if r < 0 && errno != EINTR { throw .system(.current) }
        }
    }

    // MARK: Frames

    static func le32(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(v).littleEndian) { Array($0) } }

    static func readLE32(_ b: [UInt8], at i: Int) -> Int {
        Int(UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24)
    }
}
