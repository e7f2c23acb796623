import Foundation
import Testing
import ThumbcacheTestSupport
@testable import ThumbcacheRemote

/// The S3 client against a real SeaweedFS cluster (its S3 gateway checks every signature).
@Suite(.serialized)
struct S3ClientTests {
    @Test func objectsGoInAndComeBackOut() throws {
        let cluster = try SeaweedCluster()
        let client = try S3Client(bucket: "objects", configuration: AWSConfiguration.load(environment: cluster.environment))
        try client.createBucket().get()
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let put = client.put([(key: "a/b c/ü+1.bin", body: body, contentType: "application/octet-stream", metadata: ["kind": "test"]),
                              (key: "a/two", body: [1, 2, 3], contentType: "text/plain", metadata: [:])])
        for r in put { try r.get() }
        let got = client.get(["a/b c/ü+1.bin", "a/two", "a/missing"], maxBody: 1 << 20)
        #expect(try got[0].get() == body)
        #expect(try got[1].get() == [1, 2, 3])
        #expect(try got[2].get() == nil)
        let head = try #require(try client.head(["a/b c/ü+1.bin"])[0].get())
        #expect(head["x-amz-meta-kind"] == "test")
        #expect(head["content-length"] == "100000")
        #expect(try client.head(["nothing"])[0].get() == nil)

        // Paged listing: one key a page, three pages.
        try client.put([(key: "a/three", body: [9], contentType: "text/plain", metadata: [:])])[0].get()
        var keys: [String] = []
        var next: String?
        repeat {
            let page = try client.list(prefix: "a/", maxKeys: 1, continuation: next).get()
            keys += page.objects.map(\.key)
            next = page.next
        } while next != nil
        #expect(keys == ["a/b c/ü+1.bin", "a/three", "a/two"])

        // A body larger than the caller accepts is refused, not held.
        let capped = client.get(["a/b c/ü+1.bin"], maxBody: 1000)
        #expect(throws: S3Failure.self) { try capped[0].get() }
    }

    @Test func wrongCredentialsAndAMissingBucketSayWhich() throws {
        let cluster = try SeaweedCluster(volumeServers: 1)
        var environment = cluster.environment
        let good = try S3Client(bucket: "present", configuration: AWSConfiguration.load(environment: environment))
        try good.createBucket().get()
        environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let tier = try S3Tier(bucket: "present", prefix: "p", configuration: AWSConfiguration.load(environment: environment))
        guard case .failure(let denied) = tier.check(), case .denied = denied.reason else {
            Issue.record("wrong secret: \(tier.check())")
            return
        }
        #expect(!denied.description.contains("not-the-secret"), "the secret never appears in a message")
        let missing = try S3Tier(bucket: "absent", prefix: "", configuration: AWSConfiguration.load(environment: cluster.environment))
        guard case .failure(let absent) = missing.check(), case .missing = absent.reason else {
            Issue.record("missing bucket: \(missing.check())")
            return
        }
        cluster.stop("s3")
        guard case .failure(let down) = good.list(prefix: "").mapError({ $0 }), down.connectFailed else {
            Issue.record("a stopped gateway should fail to connect")
            return
        }
    }

    @Test func credentialsComeFromAProfile() throws {
        let home = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: home.appending(".aws"), withIntermediateDirectories: true)
        try home.write(".aws/credentials", Array("""
            [default]
            aws_access_key_id = DEFAULTKEY
            aws_secret_access_key = defaultsecret
            [work]
            aws_access_key_id = WORKKEY
            aws_secret_access_key = worksecret
            aws_session_token = token123
            """.utf8))
        try home.write(".aws/config", Array("""
            [profile work]
            region = eu-west-3
            endpoint_url = http://127.0.0.1:9000
            """.utf8))
        let work = AWSConfiguration.load(environment: ["HOME": home.path, "AWS_PROFILE": "work"])
        #expect(work.credentials == AWSCredentials(accessKeyID: "WORKKEY", secretAccessKey: "worksecret", sessionToken: "token123"))
        #expect(work.region == "eu-west-3")
        #expect(work.endpoint == "http://127.0.0.1:9000")
        let plain = AWSConfiguration.load(environment: ["HOME": home.path])
        #expect(plain.credentials?.accessKeyID == "DEFAULTKEY")
        #expect(plain.region == "us-east-1" && plain.endpoint == nil)
        // The environment wins over the files.
        let env = AWSConfiguration.load(environment: ["HOME": home.path, "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret",
                                                      "AWS_REGION": "ap-south-1"])
        #expect(env.credentials?.accessKeyID == "ENVKEY" && env.region == "ap-south-1")
    }

    @Test func addressingFollowsTheEndpoint() throws {
        let aws = try S3Client(bucket: "photos", configuration: AWSConfiguration(credentials: nil, region: "eu-central-1"))
        #expect(aws.host == "photos.s3.eu-central-1.amazonaws.com" && !aws.pathStyle)
        #expect(aws.path(forKey: "tc1/ab/x.png") == "/tc1/ab/x.png")
        let local = try S3Client(bucket: "photos", configuration: AWSConfiguration(credentials: nil, endpoint: "http://127.0.0.1:8333"))
        #expect(local.host == "127.0.0.1:8333" && local.pathStyle)
        #expect(local.path(forKey: "tc1/ab/x.png") == "/photos/tc1/ab/x.png")
        let dotted = try S3Client(bucket: "my.photos", configuration: AWSConfiguration(credentials: nil))
        #expect(dotted.pathStyle, "TLS names cannot cover a dotted bucket's virtual host")
        #expect(throws: S3Failure.self) { try S3Client(bucket: "b", configuration: AWSConfiguration(credentials: nil, endpoint: "ftp://x")) }
    }
}
