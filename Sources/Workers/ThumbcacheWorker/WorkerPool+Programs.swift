#if canImport(Glibc)
import Glibc
#endif
import ThumbcacheImaging
import ThumbcacheSync

extension WorkerPool {
    /// Where the Debian package installs the worker programs, for every program and app on the system.
    package static let installedWorkers = "/usr/libexec/thumbcache"

    /// The worker program to start for `family`.
    func locateExecutable(_ family: WorkerFamily) throws(WorkerFailure.Reason) -> String {
        let name = family.executableName
        if let explicit = configuration.executable { return explicit }
        if let value = getenv("THUMBCACHE_WORKER"), value.pointee != 0 { return String(cString: value) }
        var candidates: [String] = []
        let exe = ProgramPaths.currentExecutable
        if let exe, let slash = exe.lastIndex(of: "/") {
            let dir = String(exe[..<slash])
            candidates.append(dir + "/" + name)
            // `swift test` may run an .xctest bundle below the products' directory.
            if let bundle = dir.split(separator: "/").firstIndex(where: { $0.hasSuffix(".xctest") }) {
                candidates.append("/" + dir.split(separator: "/")[..<bundle].joined(separator: "/") + "/" + name)
            }
        }
        // A library another program loaded (the C API's) looks beside itself, as an executable does.
        if let image = ProgramPaths.currentImage, image != exe, let slash = image.lastIndex(of: "/") {
            candidates.append(image[..<slash] + "/" + name)
        }
        // Installed: the libexec of this program's prefix (/usr/local), then the package's.
        if let exe { candidates += ProgramPaths.companionDirectories(of: exe).dropFirst().map { $0 + "/" + name } }
        candidates.append(Self.installedWorkers + "/" + name)
        candidates += ProgramPaths.searchPath.map { $0 + "/" + name }
        if let found = candidates.first(where: { access($0, X_OK) == 0 }) { return found }
        throw .unavailable("\(name) was not found beside \(exe == nil ? "the executable" : "this program"), in \(Self.installedWorkers) "
            + "or on PATH (set THUMBCACHE_WORKER to its path, or decode in-process)")
    }
}
