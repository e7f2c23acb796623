/// Bytes that identify a format at fixed offsets from the start of a file: PNG's signature at 0,
/// or ISO-BMFF's `ftyp` at 4 together with a brand at 8. Every part must match.
public struct Magic: Sendable, Hashable, Codable {
    package struct Part: Sendable, Hashable, Codable {
        package var offset: Int
        package var bytes: [UInt8]
    }

    package var parts: [Part]

    public init(_ bytes: [UInt8], at offset: Int = 0) {
        parts = [Part(offset: offset, bytes: bytes)]
    }

    public init(_ text: String, at offset: Int = 0) {
        self.init(Array(text.utf8), at: offset)
    }

    /// This magic, and also `bytes` at `offset`.
    public func and(_ bytes: [UInt8], at offset: Int) -> Magic {
        var copy = self
        copy.parts.append(Part(offset: offset, bytes: bytes))
        return copy
    }

    public func and(_ text: String, at offset: Int) -> Magic { and(Array(text.utf8), at: offset) }

    /// How many leading bytes a file must offer for this to be decided.
    package var span: Int { parts.map { $0.offset + $0.bytes.count }.max() ?? 0 }

    /// How many bytes it compares: longer magic is more specific and is tried first.
    package var weight: Int { parts.reduce(0) { $0 + $1.bytes.count } }

    /// True if `head` (the start of a file) has every part.
    package func matches(_ head: UnsafeRawBufferPointer) -> Bool {
        parts.allSatisfy { part in
            part.offset + part.bytes.count <= head.count
                && UnsafeRawBufferPointer(rebasing: head[part.offset..<(part.offset + part.bytes.count)]).elementsEqual(part.bytes)
        }
    }

    package func matches(_ head: [UInt8]) -> Bool { head.withUnsafeBytes { matches($0) } }
}
