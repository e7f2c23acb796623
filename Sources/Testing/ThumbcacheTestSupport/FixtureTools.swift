import Foundation
import ThumbcacheImaging

/// Debian's encoders and tools, run to make fixtures (`Tools/setup` installs them).
package enum FixtureTools {
    /// Runs a Debian tool and returns what it printed; its failure fails the test with its errors.
    @discardableResult
    package static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        // Errors go to a file, output to a pipe read to its end: waiting on one pipe while the
        // tool fills the other would block both.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
            throw ToolFailure(description: "cannot create \(errorFile.path) for \(tool)'s errors")
        }
        defer { try? FileManager.default.removeItem(at: errorFile) }
        process.standardError = try FileHandle(forWritingTo: errorFile)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw ToolFailure(description: "\(tool) \(arguments.joined(separator: " ")) failed: \(errors)")
        }
        return printed
    }

    package struct ToolFailure: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// Writes `image` as PNG (libpng), then has `tool` turn it into `name`.
    package static func fixture(_ dir: TemporaryDirectory, _ name: String, from image: RGBAImage, _ tool: String,
                        _ arguments: (_ input: String, _ output: String) -> [String]) throws -> String {
        let input = try dir.write(name.replacingOccurrences(of: "/", with: "-") + ".source.png", ImageEncoder.png(image))
        let output = dir.appending(name)
        try run(tool, arguments(input, output))
        return output
    }

    /// Pillow's TGA writer as a fixture tool (ImageMagick 6 writes TGA rows upside down): `mode`
    /// is Pillow's (RGB, RGBA, P, L), `rle` its run-length compression.
    package static func pillowTGA(mode: String = "RGB", rle: Bool = false) -> (_ input: String, _ output: String) -> [String] {
        let script = "import sys; from PIL import Image; Image.open(sys.argv[1]).convert('\(mode)').save(sys.argv[2]\(rle ? ", compression='tga_rle'" : ""))"
        return { ["-c", script, $0, $1] }
    }
}
