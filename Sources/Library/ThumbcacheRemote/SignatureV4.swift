import FoundationEssentials
import ThumbcacheSync
import Glibc

/// AWS Signature Version 4 for S3: the `Authorization` header of a request, or a presigned URL.
package struct SignatureV4: Sendable {
    package var credentials: AWSCredentials
    package var region: String
    package var service = "s3"

    package init(credentials: AWSCredentials, region: String) {
        self.credentials = credentials
        self.region = region
    }

    /// The payload hash that tells S3 the body is not signed (presigned URLs).
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The headers to send with a request: `host`'s value as the URL gives it, `x-amz-date`,
    /// `x-amz-content-sha256`, the session token if any, `authorization`, and `headers`.
    /// - Parameters:
    ///   - path: the URI path, already percent-encoded as it is sent.
    ///   - query: decoded names and values; encoded and sorted here.
    package func signedHeaders(method: String, host: String, path: String, query: [(String, String)] = [],
                               headers: [(String, String)] = [], payload: [UInt8], date: Date = Date()) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        var all = headers.map { ($0.0.lowercased(), $0.1) }
        all.append(("host", host))
        all.append(("x-amz-date", amzDate))
        all.append(("x-amz-content-sha256", Digest.hex(Digest.sha256(payload))))
        if let token = credentials.sessionToken { all.append(("x-amz-security-token", token)) }
        all.sort { $0.0 < $1.0 }
        let signedNames = all.map(\.0).joined(separator: ";")
        let canonical = [
            method, path, Self.canonicalQuery(query),
            all.map { "\($0.0):\($0.1.trimmingWhitespace(newlines: false))\n" }.joined(),
            signedNames, all.first { $0.0 == "x-amz-content-sha256" }!.1,
        ].joined(separator: "\n")
        let signature = sign(canonical, amzDate: amzDate, day: day)
        let authorization = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope(day)), SignedHeaders=\(signedNames), Signature=\(signature)"
        return all.filter { $0.0 != "host" } + [("authorization", authorization)]
    }

    /// A URL anyone may GET until `expires` seconds after `date`, signed in its query.
    package func presignedURL(scheme: String, host: String, path: String, expires: Int, date: Date = Date()) -> String {
        let (amzDate, day) = Self.timestamps(date)
        var query = [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(day))"),
            ("X-Amz-Date", amzDate),
            ("X-Amz-Expires", String(expires)),
            ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        let canonicalQuery = Self.canonicalQuery(query)
        let canonical = ["GET", path, canonicalQuery, "host:\(host)\n", "host", Self.unsignedPayload].joined(separator: "\n")
        let signature = sign(canonical, amzDate: amzDate, day: day)
        return "\(scheme)://\(host)\(path)?\(canonicalQuery)&X-Amz-Signature=\(signature)"
    }

    private func scope(_ day: String) -> String { "\(day)/\(region)/\(service)/aws4_request" }

    private func sign(_ canonicalRequest: String, amzDate: String, day: String) -> String {
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope(day), Digest.hex(Digest.sha256(Array(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        var key = Digest.hmac(key: Array(("AWS4" + credentials.secretAccessKey).utf8), Array(day.utf8))
        for part in [region, service, "aws4_request"] { key = Digest.hmac(key: key, Array(part.utf8)) }
        return Digest.hex(Digest.hmac(key: key, Array(stringToSign.utf8)))
    }

    static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        let day = zeroPadded(Int(parts.tm_year) + 1900, width: 4) + zeroPadded(Int(parts.tm_mon) + 1, width: 2) + zeroPadded(Int(parts.tm_mday), width: 2)
        return (day + "T" + [parts.tm_hour, parts.tm_min, parts.tm_sec].map { zeroPadded(Int($0), width: 2) }.joined() + "Z", day)
    }

    static func canonicalQuery(_ query: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = query.map { (encode($0.0), encode($0.1)) }
        let sorted = encoded.sorted { a, b in a.name == b.name ? a.value < b.value : a.name < b.name }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// Percent-encodes all but RFC 3986's unreserved characters (and `/` when `keepingSlashes`),
    /// as SigV4 requires.
    package static func encode(_ s: String, keepingSlashes: Bool = false) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlashes:
                out.append("/")
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return out
    }
}
