import Synchronization
import ThumbcacheStore
import ThumbcacheSync
#if canImport(Glibc)
import Glibc
#endif

/// Uploads the store's queued thumbnails in the background (write-behind): a thread reads the
/// queue in key order, a batch at a time, sends each batch at once, and takes off the queue
/// what went up. What the remote refuses stays queued for a later run; while the remote is
/// unavailable nothing is tried and everything stays queued. A crash loses nothing: an entry
/// leaves the queue only after its upload succeeded (an upload repeated after a crash stores
/// the same bytes again).
package final class RemoteUploader: Sendable {
    package let store: ThumbnailStore
    package let remote: RemoteCache
    private let state = ConditionLockedState(State())
    /// The uploading thread, joined by the first ``finish(waiting:)``: a watcher makes an
    /// uploader for each batch, and a thread never joined would keep its stack.
    private let thread = Mutex<pthread_t?>(nil)
    static let batchSize = 32

    private struct State {
        /// New entries may be queued: look again.
        var nudged = true
        /// Stop once nothing more can go now.
        var draining = false
        var stopped = false
        /// Where the next read of the queue starts (nil: its beginning).
        var cursor: ThumbnailKey?
        /// Entries the remote refused in this run: not tried again until the next.
        var refused: Set<ThumbnailKey> = []
        /// Something went up since the pass over the queue began.
        var sentThisPass = false
        var uploaded = 0
        var storeError: String?
    }

    /// Starts uploading at once.
    package init(store: ThumbnailStore, remote: RemoteCache) {
        self.store = store
        self.remote = remote
        let started = startThread { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// Something was queued: look at the queue again.
    package func nudge() { state.withLock { $0.nudged = true } }

    /// Stops the uploader and returns what it did. With `waiting`, first uploads everything
    /// the remote takes now (ending early if the remote becomes unavailable).
    package func finish(waiting: Bool = true) -> RemoteUploadSummary {
        state.withLock { s in
            s.draining = true
            s.nudged = true
            if !waiting { s.stopped = true }
        }
        let (uploaded, error) = state.withLock(waitingUntil: { $0.stopped }) { ($0.uploaded, $0.storeError) }
        if let running = thread.withLock({ t -> pthread_t? in
            defer { t = nil }
            return t
        }) {
            pthread_join(running, nil)
        }
        return RemoteUploadSummary(uploaded: uploaded, stillQueued: (try? store.queuedUploadCount()) ?? 0, storeError: error)
    }

    private func run() {
        while true {
            // Wait for a nudge (or a second, for what another process queued) unless draining.
            let (stop, cursor, refused) = state.withLock(waitingUntil: { $0.nudged || $0.draining || $0.stopped },
                                                         deadline: MonotonicClock.nanoseconds() + 1_000_000_000) { s in
                s.nudged = false
                return (s.stopped, s.cursor, s.refused)
            }
            if stop { break }
            guard remote.isAvailable else {
                if state.withLock({ $0.draining }) { break }
                state.withLock(waitingUntil: { $0.draining || $0.stopped }, deadline: MonotonicClock.nanoseconds() + 500_000_000) { _ in }
                continue
            }
            let queued: [(key: ThumbnailKey, attributes: [UInt8])]
            do {
                queued = try store.queuedUploads(after: cursor, limit: Self.batchSize)
            } catch {
                state.withLock { $0.storeError = error.description }
                break
            }
            if queued.isEmpty {
                // The end of a pass: done when draining and the pass sent nothing more; else the
                // next pass starts over at once if it sent something, or after a nudge or a second.
                let draining = state.withLock { s -> Bool in
                    defer {
                        s.nudged = s.sentThisPass
                        s.sentThisPass = false
                        s.cursor = nil
                    }
                    return s.draining && (!s.sentThisPass || s.cursor == nil)
                }
                if draining { break }
                continue
            }
            let batch = queued.filter { !refused.contains($0.key) }
            var items: [(key: ThumbnailKey, object: [UInt8])] = []
            var done: [StoreWrite] = []
            var newlyRefused: [ThumbnailKey] = []
            for entry in batch {
                // Evicted since it was queued: nothing to send.
                guard let record = try? store.thumbnail(entry.key) else {
                    done.append(.dequeueUpload(entry.key))
                    continue
                }
                // The attributes go as the queue keeps them, encoded once when the thumbnail was made.
                guard let object = try? RemoteThumbnail.object(header: record.header, data: record.data, attributesJSON: entry.attributes) else {
                    newlyRefused.append(entry.key)
                    continue
                }
                items.append((entry.key, object))
            }
            let sent = remote.upload(items)
            for (item, ok) in zip(items, sent) {
                if ok { done.append(.dequeueUpload(item.key)) } else if remote.isAvailable { newlyRefused.append(item.key) }
            }
            do {
                if !done.isEmpty { try store.apply(done) }
            } catch {
                state.withLock { $0.storeError = error.description }
                break
            }
            state.withLock { s in
                s.uploaded += sent.filter { $0 }.count
                s.refused.formUnion(newlyRefused)
                s.cursor = queued.last?.key
                s.sentThisPass = s.sentThisPass || sent.contains(true) || !done.isEmpty
                s.nudged = true  // the rest of this pass
            }
        }
        state.withLock { $0.stopped = true }
    }
}

/// What a run's write-behind uploads did, when they stopped.
public struct RemoteUploadSummary: Sendable, Codable, Hashable {
    public var uploaded: Int
    /// Entries left on the queue, for a later run.
    public var stillQueued: Int
    /// Why the store could not be read or written, if that stopped the uploads.
    public var storeError: String?
}
