/// A stable share of a tree: N machines that each warm share K of N into one remote tier
/// cover the tree once between them, and then any of them fetches everything.
///
/// A file's share follows from its path relative to the root it was found under (FNV-1a), so
/// it does not depend on where each machine mounts the tree, on the walk's order, or on the
/// other files.
public struct WarmShard: Sendable, Hashable, CustomStringConvertible {
    /// 1…count.
    public let index: Int
    public let count: Int

    public init?(index: Int, count: Int) {
        guard count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// Parses `K/N`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]) else { return nil }
        self.init(index: k, count: n)
    }

    public var description: String { "\(index)/\(count)" }

    /// True if the file at `relativePath` (below its root, no leading slash) is in this share: the
    /// warmer's filter, not an app's (it sets ``Warmer/Options/shard``).
    package func contains(relativePath: some StringProtocol) -> Bool {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in relativePath.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return Int(hash % UInt64(count)) == index - 1
    }

    /// `path`'s part below the first of `roots` it is under (itself, for a root that is a file).
    static func relative(_ path: String, roots: [String]) -> Substring {
        for root in roots where path.hasPrefix(root) {
            if path.count == root.count { return path.split(separator: "/").last ?? path[...] }
            let rest = path.dropFirst(root.count)
            if root == "/" { return rest }
            if rest.first == "/" { return rest.dropFirst() }
        }
        return path[...]
    }
}
