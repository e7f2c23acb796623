/// A failure to report as "Error: …" without the usage text (which ValidationError adds).
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
