import FoundationEssentials
import ThumbcacheSync

/// Keys to sign S3 requests with, found the way every S3 tool finds them.
package struct AWSCredentials: Sendable, Equatable {
    package var accessKeyID: String
    package var secretAccessKey: String
    package var sessionToken: String?

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// Where an S3 client's settings come from: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
/// `AWS_SESSION_TOKEN`; else the profile `AWS_PROFILE` (default `default`) of
/// `~/.aws/credentials` and `~/.aws/config` (or `AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`);
/// the region from `AWS_REGION`, `AWS_DEFAULT_REGION` or the profile; the endpoint from
/// `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL` or the profile's `endpoint_url`.
package struct AWSConfiguration: Sendable, Equatable {
    package var credentials: AWSCredentials?
    package var region: String
    /// An S3-compatible service's address (`http://127.0.0.1:8333`); nil for AWS itself.
    package var endpoint: String?
    /// The profile the settings came from, for messages.
    package var profile: String

    package init(credentials: AWSCredentials?, region: String = "us-east-1", endpoint: String? = nil, profile: String = "default") {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
        self.profile = profile
    }

    /// Reads the settings from `environment` and the files it points to.
    package static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> AWSConfiguration {
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = env("HOME") ?? FilePaths.home
        let profile = env("AWS_PROFILE") ?? "default"
        let credentialsFile = INIFile(path: env("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials")
        let configFile = INIFile(path: env("AWS_CONFIG_FILE") ?? home + "/.aws/config")
        // The credentials file names a profile plainly; the config file names others `[profile NAME]`.
        let fromCredentials = credentialsFile.section(profile)
        let fromConfig = configFile.section(profile == "default" ? "default" : "profile " + profile)
        func setting(_ key: String) -> String? { fromCredentials[key] ?? fromConfig[key] }

        var credentials: AWSCredentials?
        if let id = env("AWS_ACCESS_KEY_ID"), let secret = env("AWS_SECRET_ACCESS_KEY") {
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"))
        } else if let id = setting("aws_access_key_id"), let secret = setting("aws_secret_access_key") {
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: setting("aws_session_token"))
        }
        let region = env("AWS_REGION") ?? env("AWS_DEFAULT_REGION") ?? setting("region") ?? "us-east-1"
        let endpoint = env("AWS_ENDPOINT_URL_S3") ?? env("AWS_ENDPOINT_URL") ?? setting("endpoint_url")
        return AWSConfiguration(credentials: credentials, region: region, endpoint: endpoint, profile: profile)
    }
}

/// The AWS shared files' INI dialect: `[section]`, `key = value`, `#` and `;` comments; an
/// indented line continues a nested block (`s3 =` then `  addressing_style = path`), read here
/// as a key of its own.
struct INIFile {
    private var sections: [String: [String: String]] = [:]

    init(path: String) {
        self.init(text: (try? String(contentsOfFile: path, encoding: .utf8)) ?? "")
    }

    init(text: String) {
        var current: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingWhitespace(newlines: false)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingWhitespace(newlines: false)
                continue
            }
            guard let section = current, let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingWhitespace(newlines: false).lowercased()
            let value = line[line.index(after: eq)...].trimmingWhitespace(newlines: false)
            if !value.isEmpty { sections[section, default: [:]][key] = value }
        }
    }

    func section(_ name: String) -> [String: String] { sections[name] ?? [:] }
}
