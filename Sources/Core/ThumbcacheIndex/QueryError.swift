/// A query that cannot be run: what is wrong and where.
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// Character offset in ``query`` the error points at.
    public var position: Int
    public var query: String

    package init(message: String, position: Int, query: String) {
        self.message = message
        self.position = position
        self.query = query
    }

    /// The message, the query and a caret under the position.
    public var description: String {
        "\(message) (at character \(position + 1))\n  \(query)\n  \(String(repeating: " ", count: max(0, position)))^"
    }
}
