#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where programs are: this process's own, and a name looked up as a shell would.
package enum ProgramPaths {
    /// This process's executable (`/proc/self/exe`), or nil where that cannot be read.
    package static var currentExecutable: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The file this code was loaded from: the executable, or a shared library (libthumbcache.so
    /// in a Python process), whose directory may hold the worker programs too. Read once: a pool
    /// looks for its programs at every worker it starts.
    package static let currentImage: String? = {
        // The mapping that holds this module's header, read from /proc/self/maps: dladdr would
        // say the same but Swift's Glibc does not export it.
        let address = UInt(bitPattern: #dsohandle)
        guard let file = fopen("/proc/self/maps", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 4096 + Int(PATH_MAX))
        while fgets(&line, Int32(line.count), file) != nil {
            let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let fields = text.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            let range = fields.first?.split(separator: "-") ?? []
            guard fields.count == 6, range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                  (start..<end).contains(address) else { continue }
            let path = fields[5].drop { $0 == " " }.prefix { $0 != "\n" }
            return path.hasPrefix("/") ? String(path) : nil
        }
        return nil
    }()

    /// Where thumbcache's other programs are, for one at `path`: its own directory (a build's
    /// products), then the other half of an installed prefix, whose `bin` holds `thumbcache` and
    /// whose `libexec/thumbcache` holds the worker programs and the plug-in's.
    package static func companionDirectories(of path: String) -> [String] {
        guard let slash = path.lastIndex(of: "/") else { return [] }
        let dir = String(path[..<slash]), libexec = "/libexec/thumbcache"
        if dir.hasSuffix("/bin") { return [dir, dir.dropLast(4) + libexec] }
        if dir.hasSuffix(libexec) { return [dir, dir.dropLast(libexec.count) + "/bin"] }
        return [dir]
    }

    /// The directories of `$PATH`, in order (a default when it is unset or empty).
    package static var searchPath: [String] {
        let value = getenv("PATH").map { String(cString: $0) } ?? ""
        return (value.isEmpty ? "/usr/local/bin:/usr/bin:/bin" : value).split(separator: ":").map(String.init)
    }

    /// `program` if it is an absolute path to an executable, else the first executable of that
    /// name on `$PATH`.
    package static func resolve(_ program: String) -> String? {
        if program.hasPrefix("/") { return access(program, X_OK) == 0 ? program : nil }
        return searchPath.map { $0 + "/" + program }.first { access($0, X_OK) == 0 }
    }
}
