import ArgumentParser
import FoundationEssentials
import ThumbcacheSync
import Thumbcache

/// The shared remote tier, for every command that makes thumbnails.
struct RemoteOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "A shared tier asked before decoding and given what is made here: s3://BUCKET/PREFIX (default: $THUMBCACHE_REMOTE). Credentials, region and endpoint as the AWS tools take them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE with ~/.aws, AWS_REGION, AWS_ENDPOINT_URL.",
        valueName: "url"))
    var remote: String?

    @Option(name: .long, help: ArgumentHelp(
        "Upload thumbnails of PNG, JPEG, GIF, WebP and BMP files only from this size on (bytes, or with K, M, G): smaller ones decode about as fast as their thumbnail is fetched on a LAN. Over the internet 1M (iCloud's line) suits better. Other types always go up.",
        valueName: "size"))
    var uploadMinSize: String = "32K"

    var url: String? {
        (remote ?? ProcessInfo.processInfo.environment["THUMBCACHE_REMOTE"]).flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        guard CompactCommand.parseSize(uploadMinSize) != nil else {
            throw ValidationError("--upload-min-size takes a size like 0, 512K or 1M")
        }
    }

    /// The remote, checked once: wrong credentials or a missing bucket stop the command here
    /// with one clear error; one that does not answer, or fails of its own, is a warning, and the
    /// command decodes locally.
    /// Unchecked (`get`): nothing is asked until the local cache misses, and a remote that then
    /// fails is a warning, the thumbnail made here.
    func open(checked: Bool = true) throws -> RemoteCache? {
        guard let url else { return nil }
        let policy = UploadPolicy(minimumSourceBytes: Int64(CompactCommand.parseSize(uploadMinSize) ?? 32 << 10))
        do {
            let remote = try RemoteCache.open(url, uploadPolicy: policy) { message in
                writeStandardError("thumbcache: warning: \(message)\n")
            }
            if checked { try remote.check() }
            return remote
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
