#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import ThumbcacheSync

/// A connection ``HitLoop`` answers: what was read and not yet answered, and the responses not
/// yet sent.
final class HitConnection {
    let fd: Int32
    var input: [UInt8] = []
    /// Where the next request starts in `input`.
    var start = 0
    /// The peer will send nothing more.
    var ended = false
    var waitsToWrite = false
    /// Responses in order: a head's bytes, then its body (a buffer, or a held file).
    var pending: [Piece] = []
    /// Bytes of `pending`'s first piece already sent.
    var sent = 0
    /// How much of `input` has been looked through for a line's end.
    private var scanned = 0

    enum Piece {
        case bytes([UInt8])
        case buffer(ByteBuffer)
        case file(HeldFile)

        var count: Int {
            switch self {
            case .bytes(let b): b.count
            case .buffer(let b): b.readableBytes
            case .file(let f): f.size
            }
        }
    }

    enum Outcome { case sent, blocked, failed }

    /// Since when it has waited: for its next request (from its arrival or its last answer),
    /// or for the client to take more of a response (from the last bytes it took).
    /// (``MonotonicClock/coarseNanoseconds()``.)
    var since: UInt64

    init(_ fd: Int32, since: UInt64) {
        self.fd = fd
        self.since = since
    }

    /// Queues `entry`'s `200`, with the bytes NIO's encoder writes for ``HotThumbnailResponder``'s.
    func queue(_ entry: HotThumbnails.Entry, date: String) {
        var head = entry.rawHead
        head.reserveCapacity(head.count + date.utf8.count + 10)
        head += Array("Date: ".utf8) + Array(date.utf8) + [13, 10, 13, 10]
        pending.append(.bytes(head))
        switch entry.payload {
        case .buffer(let body): pending.append(.buffer(body))
        case .file(let file): pending.append(.file(file))
        }
    }

    /// Moves past an answered request of `length` bytes; the next is looked through from its start.
    func consume(_ length: Int) {
        start += length
        scanned = start
    }

    /// Whether a line feed came after the request's start since this was last asked.
    func lineEnded() -> Bool {
        let from = max(start, scanned)
        scanned = input.count
        return input[from...].contains(10)
    }

    /// Drops the answered requests' bytes once they are most of what is held.
    func compact() {
        if start == input.count {
            input.removeAll(keepingCapacity: input.capacity <= 64 << 10)
            (start, scanned) = (0, 0)
        } else if start > 4096 && start * 2 > input.count {
            input.removeFirst(start)
            scanned -= min(scanned, start)
            start = 0
        }
    }

    /// Sends the pending pieces: a head and a buffer together, a head before a file's pages
    /// marked as more to come, so that they leave in the same segments (nginx's `tcp_nopush`).
    func send() -> Outcome {
        while let first = pending.first {
            let n: Int
            switch first {
            case .bytes(let head):
                let next = pending.count > 1 ? pending[1] : nil
                if case .buffer(let body)? = next {
                    n = Self.sendPair(fd, head, from: sent, body)
                } else {
                    let more = next == nil ? 0 : Int32(MSG_MORE)
                    n = head.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, head.count - sent, Int32(MSG_NOSIGNAL) | more) }
                }
            case .buffer(let body):
                n = body.withUnsafeReadableBytes { Glibc.send(fd, $0.baseAddress! + sent, body.readableBytes - sent, Int32(MSG_NOSIGNAL)) }
            case .file(let file):
                var offset = off_t(sent)
                n = sendfile(fd, file.descriptor, &offset, file.size - sent)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN ? .blocked : .failed
            }
            sent += n
            if n > 0 { since = MonotonicClock.coarseNanoseconds() }
            while let piece = pending.first, sent >= piece.count {
                sent -= piece.count
                pending.removeFirst()
            }
        }
        return .sent
    }

    /// A head (from `offset`) and a buffer in one `sendmsg`; the bytes sent.
    private static func sendPair(_ fd: Int32, _ head: [UInt8], from offset: Int, _ body: ByteBuffer) -> Int {
        head.withUnsafeBytes { h in
            body.withUnsafeReadableBytes { b in
                var parts = [iovec(iov_base: UnsafeMutableRawPointer(mutating: h.baseAddress! + offset), iov_len: h.count - offset),
                             iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress), iov_len: b.count)]
                return parts.withUnsafeMutableBufferPointer { p in
                    var message = msghdr()
                    message.msg_iov = p.baseAddress
                    message.msg_iovlen = 2
                    return sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                }
            }
        }
    }
}
