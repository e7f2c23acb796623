import CThumbcacheDescriptors
import Glibc
import Thumbcache
import ThumbcacheSync

/// A process made for one file (`get`) asking the session's running daemon, whose workers are
/// already started, over a Unix socket in `$XDG_RUNTIME_DIR` named after the store it serves.
///
/// The asker sends the file's open descriptor with its path: the daemon answers only when both name
/// the same file, so it reads nothing the asker could not open itself, and only to its own user
/// (`SO_PEERCRED`). Docs/SECURITY.md, "The session socket".
package enum SessionSocket {
    /// Why the daemon did not answer; the asker then makes the thumbnail itself.
    package struct Declined: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// Where the daemon serving the store in `storeDirectory` listens: `$XDG_RUNTIME_DIR`, named by
    /// a hash of the store's real path; nil without a runtime directory, or when the path would not
    /// fit a socket address.
    /// (`runtimeDirectory` by getenv, not ProcessInfo, whose whole environment took a third of a
    /// millisecond of every one-file miss before its worker started.)
    package static func path(forStoreAt storeDirectory: String, runtimeDirectory: String? = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }) -> String? {
        guard let runtime = runtimeDirectory, runtime.hasPrefix("/") else { return nil }
        var real = storeDirectory
        if let resolved = realpath(storeDirectory, nil) {
            real = String(cString: resolved)
            free(resolved)
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: a name, not a secret
        for byte in real.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let path = runtime + "/thumbcache-" + String(hash, radix: 16) + ".socket"
        return UnixSocket.fits(path) ? path : nil
    }

    /// The daemon's representation of `request`'s file, or nil when none serves the store at
    /// `storeDirectory` or it declined (the asker makes it then, and reports any error itself).
    package static func ask(_ request: ThumbnailRequest, storeDirectory: String) -> ThumbnailRepresentation? {
        guard request.contentType == nil, let socketPath = path(forStoreAt: storeDirectory) else { return nil }
        let file = open(request.path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard file >= 0 else { return nil }
        defer { close(file) }
        return try? exchange(Request(request), file: file, socketPath: socketPath).get()
    }

    /// One request and its answer: `file` (an open descriptor) goes with it.
    package static func exchange(_ request: Request, file: Int32, socketPath: String) -> Result<ThumbnailRepresentation, Declined> {
        guard case .success(let connection) = UnixSocket.connect(to: socketPath) else { return .failure(Declined(description: "no daemon listens at \(socketPath)")) }
        defer { close(connection) }
        // Never waits forever on a daemon that stopped answering: a minute is past any worker's timeout.
        setTimeout(connection, SO_RCVTIMEO, seconds: 60)
        let bytes = request.encoded()
        let sent = bytes.withUnsafeBytes { cdesc_send(connection, $0.baseAddress, $0.count, file) }
        guard sent == bytes.count else { return .failure(Declined(description: "the request was not sent whole")) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { buffer in retryingInterrupts { recv(connection, buffer.baseAddress, buffer.count, 0) } }
            guard case .success(let count) = n else { return .failure(Declined(description: "the answer broke off")) }
            if count == 0 { break }
            answer += chunk[..<count]
            guard answer.count <= Answer.largest else { return .failure(Declined(description: "the answer is too large")) }
        }
        return Answer.decode(answer)
    }

    static func setTimeout(_ fd: Int32, _ option: Int32, seconds: Int) {
        var value = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// What is asked: a `ThumbnailRequest`'s box and representations, and the file's path.
    package struct Request: Sendable, Equatable {
        /// Version 2 added the page (a preview's); a daemon of version 1 declines it, and the asker
        /// makes the picture itself.
        static let magic: [UInt8] = Array("TCQ2".utf8)
        static let longestPath = 4096

        package var path: String
        package var width: Double
        package var height: Double
        package var scale: Double
        package var minimumDimension: Double
        package var representationTypes: Int
        package var fill: Bool
        package var page: Int

        package init(_ request: ThumbnailRequest) {
            self.init(path: request.path, width: request.width, height: request.height, scale: request.scale,
                      minimumDimension: request.minimumDimension, representationTypes: request.representationTypes.rawValue, fill: request.mode == .fill,
                      page: request.page)
        }

        init(path: String, width: Double, height: Double, scale: Double, minimumDimension: Double, representationTypes: Int, fill: Bool, page: Int) {
            (self.path, self.width, self.height, self.scale) = (path, width, height, scale)
            (self.minimumDimension, self.representationTypes, self.fill, self.page) = (minimumDimension, representationTypes, fill, page)
        }

        package var thumbnailRequest: ThumbnailRequest {
            var request = ThumbnailRequest(fileAt: path, width: width, height: height, scale: scale,
                                           representationTypes: .init(rawValue: representationTypes))
            request.minimumDimension = minimumDimension
            request.mode = fill ? .fill : .fit
            request.page = page
            return request
        }

        /// The magic, the body's length, then the body.
        func encoded() -> [UInt8] {
            var body = WireWriter()
            for value in [width, height, scale, minimumDimension] { body.double(value) }
            body.int(representationTypes)
            body.int(page)
            body.bool(fill)
            body.string(path)
            var out = WireWriter()
            out.bytes = Self.magic
            out.run(body.bytes)
            return out.bytes
        }

        /// The length of the whole request once its first 8 bytes are in, or nil if they are not a request.
        static func length(ofHeader bytes: ArraySlice<UInt8>) -> Int? {
            guard bytes.count >= 8, Array(bytes.prefix(4)) == magic else { return nil }
            var reader = WireReader(bytes.dropFirst(4))
            guard let length = reader.uint32(), length <= UInt32(64 + longestPath) else { return nil }
            return 8 + Int(length)
        }

        static func decode(_ bytes: ArraySlice<UInt8>) -> Request? {
            var reader = WireReader(bytes.dropFirst(8), longestRun: longestPath)
            guard let width = reader.double(), let height = reader.double(), let scale = reader.double(), let minimum = reader.double(),
                  let types = reader.int(), let page = reader.int(), let fill = reader.bool(), let path = reader.string(), reader.atEnd
            else { return nil }
            return Request(path: path, width: width, height: height, scale: scale, minimumDimension: minimum, representationTypes: types, fill: fill,
                           page: page)
        }
    }

    /// The daemon's answer: a representation, or why there is none.
    enum Answer {
        static let magic: [UInt8] = Array("TCA1".utf8)
        static let largest = 256 << 20

        static func encode(_ result: Result<ThumbnailRepresentation, Declined>) -> [UInt8] {
            var out = WireWriter()
            out.bytes = magic
            switch result {
            case .failure(let declined):
                out.bool(false)
                out.string(declined.description)
            case .success(let r):
                out.bool(true)
                out.uint8(r.kind.rawValue)
                out.uint8(r.encoding.rawValue)
                out.bool(r.fromCache)
                for value in [r.pixelWidth, r.pixelHeight, r.contentRect.x, r.contentRect.y, r.contentRect.width, r.contentRect.height] { out.int(value) }
                out.double(r.scale)
                out.optional(r.standsInBecause) { $0.string($1) }
                out.run(r.data)
            }
            return out.bytes
        }

        static func decode(_ bytes: [UInt8]) -> Result<ThumbnailRepresentation, Declined> {
            let malformed = Result<ThumbnailRepresentation, Declined>.failure(Declined(description: "the answer is malformed"))
            guard Array(bytes.prefix(4)) == magic else { return malformed }
            var reader = WireReader(bytes.dropFirst(4), longestRun: Answer.largest)
            guard let answered = reader.bool() else { return malformed }
            guard answered else { return .failure(Declined(description: reader.string() ?? "declined")) }
            guard let kind = reader.uint8().flatMap(RepresentationKind.init(rawValue:)), let encoding = reader.uint8().flatMap(ThumbnailEncoding.init(rawValue:)),
                  let fromCache = reader.bool()
            else { return malformed }
            let numbers = (0..<6).compactMap { _ in reader.int() }
            guard numbers.count == 6, let scale = reader.double(), let reason = reader.optional({ $0.string() }), let data = reader.run(), reader.atEnd
            else { return malformed }
            return .success(ThumbnailRepresentation(
                kind: kind, pixelWidth: numbers[0], pixelHeight: numbers[1], scale: scale, contentRect: (numbers[2], numbers[3], numbers[4], numbers[5]),
                encoding: encoding, data: Array(data), fromCache: fromCache, standsInBecause: reason))
        }
    }
}
