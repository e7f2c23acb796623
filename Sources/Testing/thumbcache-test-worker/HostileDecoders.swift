#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheImaging

/// Test decoders that do what an exploited decoder would. A test file is a PNG signature, then
/// `TCHOSTILE:<action>:<argument>\n`; the content sniffer sees a PNG, so the parent sends it to
/// a worker, whose registry picks the hostile decoder by its longer magic.
enum HostileDecoders {
    static let actions = ["segv", "spin", "alloc", "create", "connect", "exec", "signal", "sleep", "sleepopen", "elsewhere"]

    static var registrations: [ImageDecoderRegistration] {
        actions.map { action in
            ImageDecoderRegistration(
                format: ImageFormat(rawValue: "hostile-" + action), typeIdentifier: "public.png",
                magic: [Magic([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]).and("TCHOSTILE:\(action):", at: 8)]
            ) { (fd, name) throws(ImagingError) in
                // Sleeps before the header too, so a header read for the index can be caught asleep.
                if action == "sleepopen" { usleep(UInt32((Int(argument(fd)) ?? 1000) * 1000)) }
                return HostileSource(action: action, argument: argument(fd), name: name)
            }
        }
    }

    /// What follows `TCHOSTILE:<action>:` up to the line's end.
    static func argument(_ fd: Int32) -> String {
        var bytes = [UInt8](repeating: 0, count: 512)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 18 else { return "" }
        let text = bytes[18..<n].split(separator: UInt8(ascii: "\n")).first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return text.split(separator: ":", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
    }
}

/// Keeps the spinning loop from being optimised away.
nonisolated(unsafe) var hostileSink = 0

final class HostileSource: RowSource {
    let action: String, argument: String, name: String

    init(action: String, argument: String, name: String) {
        self.action = action
        self.argument = argument
        self.name = name
    }

    var header: RowSourceHeader { RowSourceHeader(width: 16, height: 16, hasAlpha: false) }

    func start(shrink: Int, fast: Bool) throws(ImagingError) -> (width: Int, height: Int) {
        switch action {
        case "segv":
            UnsafeMutablePointer<Int>(bitPattern: 0x10)!.pointee = 1
        case "spin":
            while true { hostileSink = hostileSink &* 31 &+ 7 }
        case "alloc":
            var big = [UInt8](repeating: 1, count: 4 << 30)
            big[Int(hostileSink & 0xFFFF)] = 2
            hostileSink = Int(big[12345])
        case "create":
            let fd = open(argument, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
            let error = errno
            if fd >= 0 { _ = write(fd, "written from a worker", 21); close(fd) }
            throw ImagingError(path: name, reason: .corrupt("creating \(argument): \(fd >= 0 ? "succeeded" : String(cString: strerror(error)))"))
        case "connect":
            let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let error = errno
            if s >= 0 {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(argument) ?? 9).bigEndian
                address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
                close(s)
            }
            throw ImagingError(path: name, reason: .corrupt("opening a socket: \(s >= 0 ? "succeeded" : String(cString: strerror(error)))"))
        case "exec":
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("sh"), strdup("-c"), strdup("touch \(argument)"), nil]
            execv("/bin/sh", argv)
            throw ImagingError(path: name, reason: .corrupt("exec failed: \(String(cString: strerror(errno)))"))
        case "signal":
            // Another process of the same user: the kernel would allow it; the filter must not.
            let sent = kill(pid_t(argument) ?? 1, SIGWINCH)
            throw ImagingError(path: name, reason: .corrupt("signalling \(argument): \(sent == 0 ? "succeeded" : String(cString: strerror(errno)))"))
        case "sleep":
            usleep(UInt32((Int(argument) ?? 1000) * 1000))
        case "elsewhere":
            // Hands the file on to the family named, whose worker (this program again) does the same.
            throw ImagingError(path: name, reason: .decodedElsewhere(by: argument))
        default:
            break
        }
        return (16, 16)
    }

    func readRows(_ sink: (UnsafePointer<UInt8>) -> Void) throws(ImagingError) {
        let row = [UInt8](repeating: 128, count: 16 * 4)
        for _ in 0..<16 { row.withUnsafeBufferPointer { sink($0.baseAddress!) } }
    }
}
