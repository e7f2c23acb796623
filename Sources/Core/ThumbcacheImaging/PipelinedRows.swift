#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheSync

/// A decoder's rows carried to the downscaler on another thread, a band at a time: with a
/// spare core, the filter runs beside the decoder instead of between its rows (a one-file
/// thumbnail on two cores). Memory stays a few bands, as streaming wants.
enum PipelinedRows {
    /// Rows per band: 16 rows of a 1000-pixel decode are 64 KB, cheap to hand over.
    static let rowsPerBand = 16
    /// Bands the decoder may run ahead before it waits.
    static let bandsAhead = 4

    /// The downscaled image of `source`'s rows (started already; `rowBytes` each), the scaler
    /// made and fed on a helper thread.
    static func downscale(_ source: any RowSource, name: String, rowBytes: Int,
                          scaler makeScaler: @escaping @Sendable () -> StreamingDownscaler) throws(ImagingError) -> RGBAImage {
        let bands = Bands()
        // A thread of its own (no dispatch queue): a confined worker may start threads, not
        // the event descriptors a queue's first use makes.
        let helper = startThread(beside: true) {
            let scaler = makeScaler()
            while let band = bands.next() {
                band.withUnsafeBufferPointer { rows in
                    for start in stride(from: 0, to: rows.count, by: rowBytes) { scaler.push(rows.baseAddress! + start) }
                }
            }
            if !bands.wasAbandoned { bands.finished(scaler.finish()) }
        }
        var band: [UInt8] = []
        band.reserveCapacity(rowBytes * rowsPerBand)
        do {
            try source.readRows { row in
                band.append(contentsOf: UnsafeBufferPointer(start: row, count: rowBytes))
                if band.count == rowBytes * rowsPerBand {
                    bands.put(band)
                    band.removeAll(keepingCapacity: false)
                    band.reserveCapacity(rowBytes * rowsPerBand)
                }
            }
        } catch {
            // The helper stops at its next band and is joined: nothing outlives this call.
            bands.abandon()
            pthread_join(helper, nil)
            throw error
        }
        if !band.isEmpty { bands.put(band) }
        bands.end()
        pthread_join(helper, nil)
        guard let image = bands.image else {
            throw ImagingError(path: name, reason: .corrupt("the downscaling thread gave no image"))
        }
        return image
    }

    /// The bands between the two threads, at most ``bandsAhead`` waiting.
    private final class Bands: Sendable {
        private struct State {
            var waiting: [[UInt8]] = []
            var ended = false
            var abandoned = false
            var image: RGBAImage?
        }
        private let state = ConditionLockedState(State())

        func put(_ band: [UInt8]) {
            state.withLock(waitingUntil: { $0.waiting.count < PipelinedRows.bandsAhead || $0.abandoned }) { $0.waiting.append(band) }
        }

        /// The next band; nil once the rows ended (or were abandoned) and none waits.
        func next() -> [UInt8]? {
            state.withLock(waitingUntil: { !$0.waiting.isEmpty || $0.ended || $0.abandoned }) { s in
                s.abandoned || s.waiting.isEmpty ? nil : s.waiting.removeFirst()
            }
        }

        func end() { state.withLock { $0.ended = true } }
        func abandon() { state.withLock { $0.abandoned = true } }
        var wasAbandoned: Bool { state.withLock { $0.abandoned } }
        func finished(_ image: RGBAImage) { state.withLock { $0.image = image } }
        var image: RGBAImage? { state.withLock { $0.image } }
    }
}
