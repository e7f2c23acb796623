import CThumbcacheDe265
import Glibc
import ThumbcacheCodecSupport
import ThumbcacheImaging
import ThumbcacheSync

/// The planes of the picture libde265 decodes next, mapped by us instead of by its allocator, so
/// that the rows it has finished can be converted while it decodes and their pages dropped: a
/// single-picture HEIC's planes are most of its decode's memory, and a band of them is enough
/// (Docs/IMAGING.md, "One coded picture, a band at a time").
///
/// libde265 has no progress callback; a page of an anonymous mapping becomes resident when it is
/// first written, so the deepest line whose page is resident (`mincore`) says how far the decoder
/// has come. Coding blocks are at most 64 lines high and go in raster order (when the picture
/// has no HEVC tiles), and prediction reads only the line above a block row, so lines more than
/// ``margin`` above that line are written for good. The page fault that made the deeper page
/// resident entered the kernel after the decoder's writes to them, and `mincore` reads the page
/// tables there: that orders the reader's reads after those writes.
///
/// `@unchecked Sendable`: libde265 calls `allocate` and `release` on the decoding thread, the
/// reader calls the rest from its own; all shared state is behind `lock`.
final class StreamedPlanes: @unchecked Sendable {
    /// Lines above the deepest line the decoder touched that it may still write or read: a
    /// coding-block row (64) and the line above it, with as much again to spare.
    static let margin = 128

    /// Where the planes lie in the mapping, in coded lines (the conformance window cut off by
    /// `visible`).
    struct Layout {
        let base: UnsafeMutableRawPointer
        /// Each plane's offset in the mapping, stride and coded lines.
        let planes: [(offset: Int, stride: Int, lines: Int)]
        let model: PlanarImage.Model
        let bits: Int
        /// Chroma lines per luma line's divisor (2 for 4:2:0).
        let subsampleY: Int
        let cropLeft: Int
        let cropTop: Int
        let visibleWidth: Int
        let visibleHeight: Int
        /// Whether residency can say what is finished: no transparent huge pages (one fault would
        /// make 2 MB resident) and no HEVC tiles (which finish rows out of order).
        let progressKnown: Bool

        /// The visible picture as a decoded tile, its planes starting at the conformance window.
        var tile: DecodedTile {
            let sx: Int
            if case .ycbcr(let x, _) = model { sx = x } else { sx = 1 }
            let planes = self.planes.enumerated().map { c, p in
                let (left, top) = c == 0 ? (cropLeft, cropTop) : (cropLeft / sx, cropTop / subsampleY)
                return (UnsafePointer(base.assumingMemoryBound(to: UInt8.self)) + p.offset + top * p.stride + left * (bits > 8 ? 2 : 1), p.stride)
            }
            return DecodedTile(width: visibleWidth, height: visibleHeight, model: model, planes: planes, bits: bits, colour: nil)
        }
    }

    private let lock = ConditionLock()
    private var armed = false
    private var tilesSeen = false
    private var layout: Layout?
    /// The libde265 image holding the mapping, until libde265 gives it back.
    private var holder: OpaquePointer?
    /// Whether a reader may still read the mapping.
    private var reading = false
    private var mapping: UnsafeMutableRawBufferPointer?
    private var decodeEnded = false

    deinit { unmap() }

    /// The C functions libde265 calls for every picture it allocates, with this object as userdata.
    static var allocation: de265_image_allocation {
        de265_image_allocation(
            get_buffer: { context, spec, image, userdata in
                let planes = Unmanaged<StreamedPlanes>.fromOpaque(userdata!).takeUnretainedValue()
                if let spec, let image, planes.allocate(spec.pointee, image) { return 1 }
                return cde265_get_default_image_allocation_functions().pointee.get_buffer(context, spec, image, nil)
            },
            release_buffer: { context, image, userdata in
                let planes = Unmanaged<StreamedPlanes>.fromOpaque(userdata!).takeUnretainedValue()
                if let image, planes.release(image) { return }
                cde265_get_default_image_allocation_functions().pointee.release_buffer(context, image, nil)
            })
    }

    /// Makes the next picture allocated ours; until then nothing is mapped.
    func arm() {
        lock.withLock {
            armed = true
            tilesSeen = false
            decodeEnded = false
        }
    }

    /// A picture parameter set with tiles (or one that does not parse) was given to the decoder.
    func sawTiles() { lock.withLock { tilesSeen = true } }

    /// The decoding thread is done, whatever its outcome.
    func endDecode() {
        lock.withLock {
            decodeEnded = true
            lock.broadcast()
        }
    }

    /// Waits until the decode ends or `deadline` (``MonotonicClock``) passes; the planes, once
    /// allocated, and whether the decode has ended.
    func wait(until deadline: UInt64) -> (layout: Layout?, ended: Bool) {
        lock.withLock {
            if !decodeEnded { _ = lock.wait(until: deadline) }
            return (layout, decodeEnded)
        }
    }

    /// The reader is done with the planes; they go when libde265 has given them back too.
    func endReading() {
        lock.withLock {
            reading = false
            layout = nil
            if holder == nil { unmap() }
        }
    }

    private func allocate(_ spec: de265_image_spec, _ image: OpaquePointer) -> Bool {
        let take = lock.withLock {
            defer { armed = false }
            return armed && mapping == nil
        }
        guard take else { return false }
        let chroma = cde265_get_chroma_format(image)
        let mono = chroma == de265_chroma_mono
        let bits = Int(cde265_get_bits_per_pixel(image, 0))
        guard (8...12).contains(bits), mono || cde265_get_bits_per_pixel(image, 1) == bits, spec.width > 0, spec.height > 0 else { return false }
        let sample = bits > 8 ? 2 : 1
        let model = HEVCTileDecoder.model(chroma)
        var (sx, sy) = (1, 1)
        if case .ycbcr(let x, let y) = model { (sx, sy) = (x, y) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let alignment = max(64, Int(spec.alignment))
        func roundUp(_ v: Int, _ to: Int) -> Int { (v + to - 1) / to * to }
        let width = Int(spec.width), height = Int(spec.height)
        var planes: [(offset: Int, stride: Int, lines: Int)] = []
        var bytes = 0
        for c in 0..<(mono ? 1 : 3) {
            let (w, h) = c == 0 ? (width, height) : ((width + sx - 1) / sx, (height + sy - 1) / sy)
            let stride = roundUp(w * sample, alignment)
            planes.append((bytes, stride, h))
            // A page past each plane: libde265's vector code reads a little beyond a plane's end.
            bytes += roundUp(stride * h, page) + page
        }
        guard let base = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), base != MAP_FAILED else {
            return false
        }
        let hugePagesOff = madvise(base, bytes, MADV_NOHUGEPAGE) == 0 || errno == EINVAL
        for (c, p) in planes.enumerated() { cde265_set_image_plane(image, Int32(c), base + p.offset, Int32(p.stride), nil) }
        lock.withLock {
            mapping = UnsafeMutableRawBufferPointer(start: base, count: bytes)
            holder = image
            reading = true
            layout = Layout(base: base, planes: planes, model: model, bits: bits, subsampleY: sy,
                            cropLeft: Int(spec.crop_left), cropTop: Int(spec.crop_top),
                            visibleWidth: Int(spec.visible_width), visibleHeight: Int(spec.visible_height),
                            progressKnown: hugePagesOff && !tilesSeen)
            lock.broadcast()
        }
        return true
    }

    private func release(_ image: OpaquePointer) -> Bool {
        lock.withLock {
            guard image == holder else { return false }
            holder = nil
            if !reading { unmap() }
            return true
        }
    }

    private func unmap() {
        if let m = mapping { munmap(m.baseAddress, m.count) }
        mapping = nil
    }
}

/// What the reader of ``StreamedPlanes`` has learnt of the decoder's progress and dropped behind it.
struct PlaneProgress {
    private let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    private var touched = 0
    private var dropped: [Int] = []

    /// Visible lines the decoder has finished with, from the pages it has touched.
    mutating func finishedLines(_ layout: StreamedPlanes.Layout) -> Int {
        guard layout.progressKnown else { return 0 }
        let luma = layout.planes[0]
        // The first page of each 16th line, one page at a time from the last one found (a poll
        // finds a few); a line's page may hold the line above's end, which the margin covers.
        var resident: UInt8 = 0
        while touched + 16 < luma.lines {
            let start = (luma.offset + (touched + 16) * luma.stride) / page * page
            guard mincore(layout.base + start, page, &resident) == 0, resident & 1 != 0 else { break }
            touched += 16
        }
        return max(0, min(layout.visibleHeight, touched - StreamedPlanes.margin - layout.cropTop))
    }

    /// Drops the pages of every plane wholly above visible line `consumed`, which the reader has
    /// converted and the decoder has finished with.
    mutating func drop(above consumed: Int, _ layout: StreamedPlanes.Layout) {
        if dropped.isEmpty { dropped = layout.planes.map(\.offset) }
        for (c, p) in layout.planes.enumerated() {
            let lines = c == 0 ? layout.cropTop + consumed : (layout.cropTop + consumed) / layout.subsampleY
            let end = (p.offset + lines * p.stride) / page * page
            if end > dropped[c] {
                madvise(layout.base + dropped[c], end - dropped[c], MADV_DONTNEED)
                dropped[c] = end
            }
        }
    }
}

extension HEVCTileDecoder {
    /// Decodes as ``decode(config:data:tile:declared:copied:)`` does, but on a thread of its own
    /// into ``StreamedPlanes``, while this thread hands `consume` the picture and how many of its
    /// visible lines are finished: as the decoder finishes them, and all of them once it is done.
    /// `consume` answers the lines it has converted, whose pages then go. The picture stays with
    /// the decoder until ``release()``.
    func decodeStreamed(config: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer, tile: HEIFContainer.ItemID,
                        declared: (width: Int, height: Int), copied: @escaping @Sendable () -> Void,
                        consume: (_ picture: DecodedTile, _ finished: Int) throws(ImagingError) -> Int) throws(ImagingError) {
        guard let planes = streamed else { preconditionFailure("a decoder made without streamed planes") }
        planes.arm()
        let job = StreamJob(decoder: self, config: config, data: data, tile: tile, declared: declared, copied: copied)
        let thread = startThread {
            job.run()
            planes.endDecode()
        }
        defer { planes.endReading() }
        var progress = PlaneProgress()
        /// The first plane of the picture rows were handed on from.
        var streamedFrom: UnsafePointer<UInt8>?
        var reported = 0
        var failure: ImagingError?
        // libde265 says nothing as it goes: its pages are looked at every few milliseconds, a few
        // times per coding-block row, and again at once after rows were found.
        var found = false
        while true {
            let (layout, ended) = planes.wait(until: found ? 0 : MonotonicClock.nanoseconds() + 4_000_000)
            found = false
            guard !ended else { break }
            guard let layout else { continue }
            let finished = progress.finishedLines(layout)
            guard finished > reported else { continue }
            (reported, found) = (finished, true)
            let picture = layout.tile
            streamedFrom = picture.planes[0].0
            do {
                progress.drop(above: try consume(picture, finished), layout)
            } catch {
                failure = error
                break
            }
        }
        pthread_join(thread, nil)
        if let failure { throw failure }
        let decoded = try job.outcome.result!.get()
        // Rows already handed on came from the picture mapped first; the one decoded must be it.
        if let streamedFrom, decoded.planes.first?.0 != streamedFrom {
            throw ImagingError(path: path, reason: .corrupt("tile \(tile) decoded to a picture other than the one it started"))
        }
        _ = try consume(decoded, decoded.height)
    }
}

/// One streamed decode, handed to its thread. `@unchecked Sendable`: the decoder and the coded
/// bytes are used by that thread alone until it is joined, and `outcome` is read only after that.
private struct StreamJob: @unchecked Sendable {
    let decoder: HEVCTileDecoder
    let config: UnsafeRawBufferPointer
    let data: UnsafeRawBufferPointer
    let tile: HEIFContainer.ItemID
    let declared: (width: Int, height: Int)
    let copied: @Sendable () -> Void
    let outcome = Outcome()

    final class Outcome: @unchecked Sendable {
        var result: Result<DecodedTile, ImagingError>?
    }

    func run() {
        outcome.result = Result { () throws(ImagingError) in
            try decoder.decode(config: config, data: data, tile: tile, declared: declared, copied: copied)
        }
    }
}
