/// What a check of a store or an index found wrong with one record: where it is, what is
/// wrong, and what a repair does about it.
public struct IntegrityFinding: Sendable, Hashable, Codable {
    /// The database the record is in (`thumbnails`, `postings`…).
    public var database: String
    /// The record, printably: a path, a key in hex, an item number.
    public var record: String
    public var problem: String
    /// What `--repair` does: the record removed, or the lists made again.
    public var repair: String
    /// The record's key, for the repair (not printed).
    package var key: [UInt8]

    package init(database: String, record: String, problem: String, repair: String, key: [UInt8]) {
        self.database = database
        self.record = record
        self.problem = problem
        self.repair = repair
        self.key = key
    }

    private enum CodingKeys: String, CodingKey { case database, record, problem, repair }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(database: try c.decode(String.self, forKey: .database), record: try c.decode(String.self, forKey: .record),
                  problem: try c.decode(String.self, forKey: .problem), repair: try c.decode(String.self, forKey: .repair), key: [])
    }
}

/// What one check read and found: every record visited, the violations of the format's
/// invariants, and what is merely garbage (kept until a collection, not wrong).
public struct IntegrityReport: Sendable, Hashable, Codable {
    /// Records read, by database.
    public var checked: [String: Int] = [:]
    /// Violations, at most ``listLimit`` of them listed.
    public var findings: [IntegrityFinding] = []
    /// Violations found, listed or not.
    public var violations = 0
    /// What a garbage collection would remove, by kind (orphaned thumbnails, stale entries…).
    public var garbage: [String: Int] = [:]
    /// Records a repair removed or made again.
    public var repaired = 0

    /// Violations listed at most; the rest are counted.
    package static let listLimit = 1000

    /// An empty report, filled by the checks of the store, the index and the standard cache: an app reads
    /// reports, it does not make them.
    package init() {}

    package mutating func found(_ finding: IntegrityFinding) {
        violations += 1
        if findings.count < Self.listLimit { findings.append(finding) }
    }

    package mutating func read(_ database: String, _ count: Int = 1) { checked[database, default: 0] += count }

    /// Every record read.
    public var recordsChecked: Int { checked.values.reduce(0, +) }
}

/// Lowercase hex of `bytes`, for a finding's record.
package func hexText(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
    return String(decoding: out, as: UTF8.self)
}
