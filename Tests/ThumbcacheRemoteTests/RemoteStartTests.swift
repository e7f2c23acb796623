import Foundation
import Testing
import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheTestSupport

/// A remote that fails at a command's start: only what the user must fix (credentials, the
/// bucket) stops the command; a service failing of its own is a warning, and the files are
/// decoded here.
struct RemoteStartTests {
    /// A real HTTP server on loopback answering every request 503, as an overloaded S3 service
    /// does (SeaweedFS's gateway did, once, under the full suite's load).
    static let unavailableService = """
        import http.server
        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self):
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()
            do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = answer
            def log_message(self, *arguments):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    @Test func aServiceAnsweringFailuresAtStartIsAWarningAndTheWarmGoesOn() throws {
        let service = try ChildProcess(program: "/usr/bin/python3", arguments: ["-c", Self.unavailableService])
        defer {
            service.kill()
            _ = service.wait(timeout: 10)
        }
        let port = try #require(service.waitForLines(1, timeout: 30).first.flatMap { Int($0) }, "the server did not start")
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.appending("files"), withIntermediateDirectories: true)
        _ = try dir.write("files/photo.png", ImageEncoder.png(TestPictures.source(width: 320, height: 240)))
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in ["AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1",
                             "AWS_ENDPOINT_URL": "http://127.0.0.1:\(port)", "HOME": dir.path] { environment[key] = value }
        let warm = try ChildProcess(program: "thumbcache", arguments: ["warm", dir.appending("files"), "--cache", dir.appending("cache"),
                                                                     "--remote", "s3://bucket/thumbs", "--no-index"], environment: environment)
        let (end, stderr) = warm.wait(timeout: 120)
        #expect(end == .exited(0), "\(stderr)")
        #expect(stderr.contains("warning") && stderr.contains("503"), "\(stderr)")
        #expect(try ThumbnailStore.open(directory: dir.appending("cache")).statistics().thumbnails == 1)
    }
}
