import Foundation
import Testing
@testable import ThumbcacheRemote

/// Signature Version 4 against the worked examples of Amazon S3's documentation (the signature
/// of each is the documentation's, computed by AWS).
struct SignatureV4Tests {
    static let signer = SignatureV4(
        credentials: AWSCredentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    /// Fri, 24 May 2013 00:00:00 GMT.
    static let date = Date(timeIntervalSince1970: 1_369_353_600)
    static let host = "examplebucket.s3.amazonaws.com"

    static func authorization(_ headers: [(String, String)]) -> String {
        headers.first { $0.0 == "authorization" }?.1 ?? ""
    }

    @Test func getObjectWithRange() {
        let headers = Self.signer.signedHeaders(method: "GET", host: Self.host, path: "/test.txt", headers: [("Range", "bytes=0-9")],
                                                payload: [], date: Self.date)
        #expect(Self.authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func putObjectWithABody() {
        let headers = Self.signer.signedHeaders(
            method: "PUT", host: Self.host, path: "/" + SignatureV4.encode("test$file.text", keepingSlashes: true),
            headers: [("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            payload: Array("Welcome to Amazon S3.".utf8), date: Self.date)
        #expect(Self.authorization(headers).hasSuffix("Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"))
    }

    @Test func listObjectsWithAQuery() {
        let headers = Self.signer.signedHeaders(method: "GET", host: Self.host, path: "/", query: [("max-keys", "2"), ("prefix", "J")],
                                                payload: [], date: Self.date)
        #expect(Self.authorization(headers).hasSuffix("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))
    }

    @Test func presignedGet() {
        let url = Self.signer.presignedURL(scheme: "https", host: Self.host, path: "/test.txt", expires: 86400, date: Self.date)
        #expect(url.hasSuffix("&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"))
        #expect(url.hasPrefix("https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="))
    }

    @Test func encodingKeepsOnlyUnreservedCharacters() {
        #expect(SignatureV4.encode("a b/c~d+é", keepingSlashes: true) == "a%20b/c~d%2B%C3%A9")
        #expect(SignatureV4.encode("a/b") == "a%2Fb")
    }
}
