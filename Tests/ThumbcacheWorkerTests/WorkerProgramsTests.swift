import Glibc
import Testing
@testable import ThumbcacheImaging
import ThumbcacheTestSupport

/// What the worker programs are built from. Foundation was a third of each (8 MB; about 40 MB of
/// the installed package) for a protocol that needs none of it; only `URL`'s conformance to
/// `FileLocation`, in a module every worker links, still brought it in (Docs/ARCHITECTURE.md).
struct WorkerProgramsTests {
    /// Any reference to FoundationEssentials names it somewhere in the program's bytes: the library
    /// it loads (a debug build), or a symbol or a type's module (a static one).
    @Test(arguments: WorkerFamily.allCases)
    func aWorkerProgramLinksNoFoundation(_ family: WorkerFamily) throws {
        let program = ChildProcess.productsDirectory + "/" + family.executableName
        let (status, lines, errors) = try ChildProcess.run("/usr/bin/grep", ["-c", "-a", "FoundationEssentials", program])
        // grep exits 1 when nothing matches, 2 when it cannot read the program.
        #expect(status == .exited(1), "\(family.executableName) names FoundationEssentials on \(lines.first ?? "?") lines \(errors)")
    }

    /// `thumbcache` and the C API's library use FoundationEssentials alone: corelibs Foundation
    /// and FoundationInternationalization brought ICU's data (44 MB of the stripped program) and
    /// half a millisecond to every start (Docs/PERFORMANCE.md, "Foundation's essentials only").
    @Test(arguments: ["thumbcache", "libThumbcacheC.so"])
    func theToolAndTheLibraryLinkOnlyFoundationsEssentials(_ name: String) throws {
        let program = ChildProcess.productsDirectory + "/" + name
        let (status, lines, errors) = try ChildProcess.run("/usr/bin/grep", ["-c", "-a", "-e", "libFoundation\\.so", "-e", "FoundationInternationalization",
                                                                            "-e", "_FoundationICU", program])
        #expect(status == .exited(1), "\(name) names corelibs Foundation or ICU on \(lines.first ?? "?") lines \(errors)")
    }

    /// Swift's runtime reads a program's arguments from /proc/self/cmdline, so in a sandbox
    /// without /proc the programs saw none (the plug-in then took itself for a worker and exited 0
    /// without a thumbnail); a constructor gives the runtime the real ones (`CThumbcacheProcess`).
    @Test func theProgramsSeeTheirArgumentsWithoutProc() throws {
        guard access("/usr/bin/bwrap", X_OK) == 0 else { return }
        let hidden = ["--ro-bind", "/", "/", "--tmpfs", "/proc", "--dev", "/dev"]
        let version = try ChildProcess.run("/usr/bin/bwrap", hidden + [ChildProcess.productsDirectory + "/thumbcache", "--version"])
        #expect(version.status == .exited(0) && version.stdout.first?.first?.isNumber == true, "\(version.stdout) \(version.stderr)")
        let help = try ChildProcess.run("/usr/bin/bwrap", hidden + [ChildProcess.productsDirectory + "/thumbcache-worker", "--help"])
        #expect(help.status == .exited(0) && help.stdout.first?.hasPrefix("Usage: thumbcache-thumbnailer") == true, "\(help.stdout) \(help.stderr)")
    }

    /// Run by hand, a worker program says what it is instead of waiting on a channel no one
    /// gave it (it exited 0 in silence), and the plug-in's program prints its usage.
    @Test(arguments: WorkerFamily.allCases)
    func aWorkerRunByHandSaysWhatItIs(_ family: WorkerFamily) throws {
        let ran = try ChildProcess.run(family.executableName, [])
        #expect(ran.status == .exited(2) && ran.stderr.contains("\(family.executableName): thumbcache's sandboxed decoder"), "\(ran.stderr)")
        let plugIn = try ChildProcess.run("thumbcache-thumbnailer", [])
        #expect(plugIn.status == .exited(2) && plugIn.stderr.contains("Usage: thumbcache-thumbnailer --size N INPUT OUTPUT"), "\(plugIn.stderr)")
    }
}
