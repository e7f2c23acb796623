import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheTestSupport

/// `-` and pipes as input: `thumbnail` and `text` read what a pipe brings (copied into memory,
/// up to a limit), and every input that cannot be read that way is a clear error, never a wait.
@Suite struct StandardInputTests {
    let thumbcache = ChildProcess.productsDirectory + "/thumbcache"

    /// Runs `script` in bash (for `<(…)`), `$T` naming the built `thumbcache`, within 60 s.
    private func bash(_ script: String) throws -> (status: ChildProcess.Termination, stdout: String, stderr: String) {
        let (status, stdout, stderr) = try ChildProcess.run("/usr/bin/timeout", ["60", "/bin/bash", "-c", "T=\"$0\"; " + script, thumbcache])
        return (status, stdout.joined(separator: "\n"), stderr)
    }

    private func size(ofPNG path: String) throws -> (Int, Int) {
        let image = try ImageDecoder.png(Array(try Data(contentsOf: URL(fileURLWithPath: path))), name: path)
        return (image.width, image.height)
    }

    @Test func thumbnailAndTextReadPipesAndRedirects() throws {
        let dir = TemporaryDirectory()
        let photo = try dir.write("photo.png", ImageEncoder.png(testPhoto(width: 300, height: 200)))
        let runs = [
            ("piped", "cat \(photo) | \"$T\" thumbnail - -s 96 -o \(dir.appending("piped.png"))"),
            ("redirected", "\"$T\" thumbnail - -s 96 -o \(dir.appending("redirected.png")) < \(photo)"),
            ("substituted", "\"$T\" thumbnail <(cat \(photo)) -s 96 -o \(dir.appending("substituted.png"))"),
        ]
        for (name, script) in runs {
            let (end, _, err) = try bash(script)
            #expect(end == .exited(0), "\(name): \(err)")
            #expect(try size(ofPNG: dir.appending(name + ".png")) == (96, 64), "\(name)")
        }
        // Through to standard output, as one pipeline.
        let (end, _, err) = try bash("cat \(photo) | \"$T\" thumbnail - -s 48 -o - > \(dir.appending("through.png"))")
        #expect(end == .exited(0), "\(err)")
        #expect(try size(ofPNG: dir.appending("through.png")) == (48, 32))

        let (textEnd, text, textErr) = try bash("printf 'words from a pipe\\n' | \"$T\" text -")
        #expect(textEnd == .exited(0) && text.contains("words from a pipe"), "\(textErr)")
        let (_, json, _) = try bash("printf 'words\\n' | \"$T\" text - --json")
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["path"] as? String == "-" && object?["text"] as? String == "words\n", "\(json)")
    }

    @Test func inputsThatCannotBeReadAreClearErrorsNotWaits() throws {
        let dir = TemporaryDirectory()
        // A FIFO no one writes to: empty, at once.
        #expect(mkfifo(dir.appending("fifo.png"), 0o600) == 0)
        var run = try bash("\"$T\" thumbnail \(dir.appending("fifo.png")) -o \(dir.appending("x.png"))")
        #expect(run.status == .exited(1) && run.stderr.contains("\(dir.appending("fifo.png")): empty file"), "\(run.stderr)")
        // Bytes of no format: named as standard input, not as the memory file holding them.
        run = try bash("head -c 3000 /dev/urandom | \"$T\" thumbnail - -o \(dir.appending("x.png"))")
        #expect(run.status == .exited(1) && run.stderr.contains("standard input: not an image format"), "\(run.stderr)")
        #expect(!run.stderr.contains("/proc/self/fd"), "\(run.stderr)")
        // More than a pipe may bring.
        run = try bash("head -c \((256 << 20) + 1) /dev/zero | \"$T\" thumbnail - -o \(dir.appending("x.png"))")
        #expect(run.status == .exited(1) && run.stderr.contains("more than 256 MiB came through the pipe"), "\(run.stderr)")
        // A device, no name for the output, and `get`, which keeps thumbnails by path.
        run = try bash("\"$T\" thumbnail - -o \(dir.appending("x.png")) < /dev/null")
        #expect(run.status == .exited(1) && run.stderr.contains("not a file or a pipe (a character device)"), "\(run.stderr)")
        run = try bash("echo x | \"$T\" thumbnail -")
        #expect(run.status == .exited(64) && run.stderr.contains("give -o FILE"), "\(run.stderr)")
        run = try bash("echo x | \"$T\" get - -o \(dir.appending("x.png")) --cache \(dir.appending("cache"))")
        #expect(run.status == .exited(64) && run.stderr.contains("thumbcache thumbnail - -o FILE"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appending("x.png")))
        // A terminal (util-linux's `script` gives one) would wait for typing: refused.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        let (_, stdout, _) = try ChildProcess.run("/usr/bin/script", ["-qec", "\(thumbcache) thumbnail - -o \(dir.appending("x.png"))", "/dev/null"])
        #expect(stdout.joined().contains("standard input is a terminal"), "\(stdout)")
    }
}
