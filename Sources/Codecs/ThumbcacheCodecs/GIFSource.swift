import CThumbcacheGIF
import ThumbcacheCodecSupport
import ThumbcacheImaging

extension ImageDecoderRegistration {
    /// GIF through giflib: the first frame, composed on its canvas.
    package static let gif = ImageDecoderRegistration(.gif) { (fd, name) throws(ImagingError) in
        try GIFSource(descriptor: fd, name: name)
    }
}

/// A GIF through giflib: the first frame on its canvas (transparency, local colour table,
/// interlace), streamed row by row unless interlaced. Later frames are not decoded; they are
/// counted by skipping their compressed blocks, for the index's frame count.
final class GIFSource: RowSource {
    private let path: String
    private let file: MappedFile
    /// The read position in `file`, advanced by giflib's input callback.
    fileprivate var position = 0
    private var gif: UnsafeMutablePointer<GifFileType>!
    private var transparentIndex = -1
    private var frame = (x: 0, y: 0, width: 0, height: 0, interlaced: false)
    private(set) var header: RowSourceHeader

    init(descriptor: Int32, name: String) throws(ImagingError) {
        path = name
        file = try MappedFile(descriptor: descriptor, name: name)
        header = RowSourceHeader(width: 0, height: 0, hasAlpha: false)
        var error: Int32 = 0
        gif = DGifOpen(Unmanaged.passUnretained(self).toOpaque(), gifRead, &error)
        guard gif != nil else { throw ImagingError(path: name, reason: .corrupt(Self.describe(error))) }
        try findFirstFrame()
        let canvas = (Int(gif.pointee.SWidth), Int(gif.pointee.SHeight))
        let (width, height) = canvas.0 > 0 && canvas.1 > 0 ? canvas : (frame.x + frame.width, frame.y + frame.height)
        let covers = frame.x == 0 && frame.y == 0 && frame.width >= width && frame.height >= height
        // An interlaced frame is held as indices: its own size (which may exceed the canvas) is
        // what the buffered limit must bound, not the canvas's.
        if frame.interlaced && frame.width * frame.height > DecodeLimits().maxBufferedPixels {
            throw ImagingError(path: name, reason: .tooLarge(width: UInt32(frame.width), height: UInt32(frame.height),
                                                             limit: DecodeLimits().maxBufferedPixels))
        }
        header = RowSourceHeader(width: width, height: height, hasAlpha: transparentIndex >= 0 || !covers,
                                 buffered: frame.interlaced, bufferedBytes: frame.interlaced ? frame.width * frame.height : 0,
                                 bitsPerSample: 8, colorSpace: "Palette", frameCount: nil)
    }

    deinit {
        var error: Int32 = 0
        if gif != nil { DGifCloseFile(gif, &error) }
    }

    private func fail() -> ImagingError {
        ImagingError(path: path, reason: .corrupt(Self.describe(gif.pointee.Error)))
    }

    static func describe(_ code: Int32) -> String {
        guard let text = GifErrorString(code) else { return "GIF error \(code)" }
        return String(cString: text)
    }

    /// Reads records up to the first image descriptor, keeping the graphic control's transparency.
    private func findFirstFrame() throws(ImagingError) {
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else { throw fail() }
            switch record {
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw fail() }
                if code == GRAPHICS_EXT_FUNC_CODE, let b = block, b[0] >= 4 {
                    transparentIndex = b[1] & 1 != 0 ? Int(b[4]) : -1
                }
                while block != nil { guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw fail() } }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { throw fail() }
                let d = gif.pointee.Image
                frame = (Int(d.Left), Int(d.Top), Int(d.Width), Int(d.Height), d.Interlace)
                guard frame.width > 0, frame.height > 0 else { throw ImagingError(path: path, reason: .corrupt("GIF frame of zero size")) }
                return
            case TERMINATE_RECORD_TYPE:
                throw ImagingError(path: path, reason: .corrupt("GIF file without an image"))
            default:
                throw ImagingError(path: path, reason: .corrupt("unknown GIF record"))
            }
        }
    }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        (header.width, header.height)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        guard let map = gif.pointee.Image.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors else {
            throw ImagingError(path: path, reason: .corrupt("GIF frame without a colour table"))
        }
        // Each colour as the four bytes of an RGBA pixel in memory, so a pixel is one store.
        let palette = (0..<256).map { i -> UInt32 in
            guard i < Int(map.pointee.ColorCount), i != transparentIndex else { return 0 }
            return UInt32(littleEndian: UInt32(colors[i].Red) | UInt32(colors[i].Green) << 8 | UInt32(colors[i].Blue) << 16 | 0xFF00_0000)
        }
        let (width, height) = (header.width, header.height)
        var row = [UInt8](repeating: 0, count: width * 4)
        var indices = [GifPixelType](repeating: 0, count: frame.width)
        // Interlaced: four passes over rows 0, 4, 2, 1 modulo 8, so the frame is held as indices.
        var held: [GifPixelType] = []
        if frame.interlaced {
            held = [GifPixelType](repeating: 0, count: frame.width * frame.height)
            for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
                for y in stride(from: start, to: frame.height, by: step) {
                    let ok = held.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress! + y * frame.width, Int32(frame.width)) }
                    guard ok == GIF_OK else { throw fail() }
                }
            }
        }
        let visible = max(0, min(frame.width, width - frame.x))
        for y in 0..<height {
            let fy = y - frame.y
            let inside = fy >= 0 && fy < frame.height
            // The frame writes only its own columns, so the rest of a row stays transparent; a row
            // off the frame (below it) is cleared of the last frame row's pixels.
            if !inside { row.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            if inside {
                if frame.interlaced {
                    indices.withUnsafeMutableBufferPointer { i in
                        held.withUnsafeBufferPointer { i.baseAddress!.update(from: $0.baseAddress! + fy * frame.width, count: frame.width) }
                    }
                } else {
                    guard DGifGetLine(gif, &indices, Int32(frame.width)) == GIF_OK else { throw fail() }
                }
                palette.withUnsafeBufferPointer { colours in
                    indices.withUnsafeBufferPointer { i in
                        row.withUnsafeMutableBytes { r in
                            let out = r.baseAddress! + frame.x * 4
                            for x in 0..<visible { out.storeBytes(of: colours[Int(i[x])], toByteOffset: x * 4, as: UInt32.self) }
                        }
                    }
                }
            }
            row.withUnsafeBufferPointer { sink($0.baseAddress!) }
        }
        // Rows of the frame below the canvas still have to be read before the next record.
        if !frame.interlaced && frame.y + frame.height > height {
            for _ in max(0, height - frame.y)..<frame.height where DGifGetLine(gif, &indices, Int32(frame.width)) != GIF_OK { break }
        }
        header.frameCount = countFrames()
    }

    /// 1 + the frames after the first, read as compressed blocks and never decoded; stops quietly
    /// at the first damage (a truncated animation still thumbnails from its first frame).
    private func countFrames() -> Int {
        var count = 1
        while count < 100_000 {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else { break }
            var block: UnsafeMutablePointer<GifByteType>?
            if record == EXTENSION_RECORD_TYPE {
                var code: Int32 = 0
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { break }
                while block != nil { guard DGifGetExtensionNext(gif, &block) == GIF_OK else { return count } }
            } else if record == IMAGE_DESC_RECORD_TYPE {
                var size: Int32 = 0
                guard DGifGetImageDesc(gif) == GIF_OK, DGifGetCode(gif, &size, &block) == GIF_OK else { break }
                count += 1
                while block != nil { guard DGifGetCodeNext(gif, &block) == GIF_OK else { return count } }
            } else {
                break
            }
        }
        return count
    }

    fileprivate func read(into buffer: UnsafeMutablePointer<GifByteType>, count: Int) -> Int {
        let n = max(0, min(count, file.bytes.count - position))
        if n > 0 { UnsafeMutableRawPointer(buffer).copyMemory(from: file.bytes.baseAddress! + position, byteCount: n) }
        position += n
        return n
    }
}

/// giflib's input callback: the source object rides in `UserData`.
private func gifRead(_ gif: UnsafeMutablePointer<GifFileType>?, _ buffer: UnsafeMutablePointer<GifByteType>?, _ count: Int32) -> Int32 {
    guard let gif, let buffer, let user = gif.pointee.UserData, count > 0 else { return 0 }
    return Int32(Unmanaged<GIFSource>.fromOpaque(user).takeUnretainedValue().read(into: buffer, count: Int(count)))
}
