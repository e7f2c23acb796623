/// A file's detected content type, as the stat cache keeps it: the type's identifier and a stamp
/// of the type registry that detected it (another registry — a new thumbcache, a plug-in
/// installed — detects again).
package struct CachedContentType: Sendable, Hashable {
    package var identifier: String
    package var registryStamp: UInt32

    package init(identifier: String, registryStamp: UInt32) {
        self.identifier = identifier
        self.registryStamp = registryStamp
    }
}

/// What a warm found complete for a file's content, so that the next warm of the unchanged file
/// need not look again: every thumbnail of its plan stored, and its words in the index (or none
/// to read). Each part holds while its stamp does (Docs/FORMAT.md, "What an entry vouches for").
package struct StatVouch: Sendable, Hashable {
    /// The store's removal count when the thumbnails were seen stored; any removal of a
    /// thumbnail since moves the count on, and the vouch no longer holds.
    package var removals: UInt64
    /// Which thumbnails were seen (a ``SpecStamp`` of the plan).
    package var specs: UInt32
    /// A words stamp of the index the warm fed, mixed with a stamp of which formats have words:
    /// the words hold while the index keeps that stamp valid (or the type has none); 0: not seen.
    package var words: UInt64

    static let encodedSize = 20

    package init(removals: UInt64, specs: UInt32, words: UInt64) {
        self.removals = removals
        self.specs = specs
        self.words = words
    }

    /// A stamp of the thumbnails a plan makes of any content, built from their boxes and
    /// variants in order (FNV-1a over the fields: a plan has a handful).
    package struct SpecStamp {
        private var h: UInt64 = 0xcbf2_9ce4_8422_2325

        package init() {}

        package mutating func add(boxWidth: UInt32, boxHeight: UInt32, variant: ThumbnailVariant) {
            h = (h ^ (UInt64(boxWidth) << 32 | UInt64(boxHeight))) &* 0x100_0000_01b3
            h = (h ^ variant.fingerprint) &* 0x100_0000_01b3
        }

        package var value: UInt32 { UInt32(truncatingIfNeeded: h ^ (h >> 32)) }
    }
}

/// What the stat cache remembers of a path: the file's snapshot, its content hash and, once a
/// warm has detected it, its content type and what it found complete.
///
/// Layout (little-endian): version u8 (2), flags u8, device u64, inode u64, size u64,
/// modification time i64, change time i64, content hash (16 bytes, canonical), type length u8
/// (0: none), then that many bytes of type identifier (UTF-8) and the registry stamp u32 if the
/// length is not 0, then the vouch (removals u64, specs u32, words u64) if flag bit 1 is set.
/// Version 1 (58 bytes) is the same without the type; it is still read.
/// For a path too long to be a key, the path's UTF-8 bytes follow.
package struct StatEntry: Sendable, Hashable {
    static let currentVersion: UInt8 = 2
    static let fixedSize = 59

    package var snapshot: FileSnapshot
    package var content: ContentHash
    /// Set when the file's times were too recent to trust at the moment it was recorded: a write in
    /// the same timestamp tick could go unseen, so the next lookup hashes the file again.
    package var isRacy: Bool
    /// The type a warm detected for these bytes under this name, so a re-warm opens no file.
    package var type: CachedContentType?
    /// What a warm found complete for the content (only kept with a type).
    package var vouch: StatVouch?

    package init(snapshot: FileSnapshot, content: ContentHash, isRacy: Bool, type: CachedContentType? = nil, vouch: StatVouch? = nil) {
        self.snapshot = snapshot
        self.content = content
        self.isRacy = isRacy
        self.type = type
        self.vouch = vouch
    }

    func encoded(longPath: [UInt8]?) -> [UInt8] {
        let identifier = type.map { Array($0.identifier.utf8) }.flatMap { $0.count <= 255 ? $0 : nil } ?? []
        // An older reader ignores the vouch of a short path's entry (it reads no further than the
        // type), so caches stay readable by it.
        let vouch = identifier.isEmpty ? nil : self.vouch
        var w = ByteWriter(capacity: Self.fixedSize + identifier.count + 4 + StatVouch.encodedSize + (longPath?.count ?? 0))
        w.u8(Self.currentVersion)
        w.u8((isRacy ? 1 : 0) | (vouch == nil ? 0 : 2))
        w.u64(snapshot.device)
        w.u64(snapshot.inode)
        w.u64(snapshot.size)
        w.i64(snapshot.modificationTime)
        w.i64(snapshot.changeTime)
        w.hash(content)
        w.u8(UInt8(identifier.count))
        if let type, !identifier.isEmpty {
            w.raw(identifier)
            w.u32(type.registryStamp)
        }
        if let vouch {
            w.u64(vouch.removals)
            w.u32(vouch.specs)
            w.u64(vouch.words)
        }
        if let longPath { w.raw(longPath) }
        return w.bytes
    }

    static func decode(_ value: UnsafeRawBufferPointer) -> (StatEntry, trailingPath: UnsafeRawBufferPointer)? {
        var r = ByteReader(value)
        guard let version = r.u8(), version == 1 || version == currentVersion, let flags = r.u8(), let dev = r.u64(), let ino = r.u64(),
            let size = r.u64(), let mtime = r.i64(), let ctime = r.i64(), let hash = r.hash()
        else { return nil }
        var type: CachedContentType?
        var vouch: StatVouch?
        if version >= 2 {
            guard let length = r.u8() else { return nil }
            if length > 0 {
                guard let identifier = r.view(Int(length)), let stamp = r.u32() else { return nil }
                type = CachedContentType(identifier: String(decoding: identifier, as: UTF8.self), registryStamp: stamp)
            }
            if flags & 2 != 0 {
                guard type != nil, let removals = r.u64(), let specs = r.u32(), let words = r.u64() else { return nil }
                vouch = StatVouch(removals: removals, specs: specs, words: words)
            }
        }
        let snapshot = FileSnapshot(device: dev, inode: ino, size: size, modificationTime: mtime, changeTime: ctime, kind: .regular)
        return (StatEntry(snapshot: snapshot, content: hash, isRacy: flags & 1 != 0, type: type, vouch: vouch), r.rest())
    }
}

/// Why generating a thumbnail for some content failed, remembered so that a later warm does not
/// try again forever. Keyed by content hash + generator version: a new generator retries.
///
/// Layout (little-endian): version u8, created i64, kind u8, reason (UTF-8, the rest). A
/// record of version 1 (no kind) is not read: its bytes are tried once more and recorded anew.
public struct FailureRecord: Sendable, Hashable {
    static let currentVersion: UInt8 = 2

    /// What kind of failure it was: what callers decide by, where the reason is for people.
    public enum Kind: UInt8, Sendable, Hashable {
        /// The decoder or provider rejected the bytes (corrupt, truncated, unsupported inside).
        case rejected = 0
        /// The file is fine but holds no picture (an audio file without a cover): the type's icon
        /// stands in, and nothing is reported as failed.
        case noPicture = 1
        /// The header claims more pixels than the limits allow.
        case tooLarge = 2
        /// The sandboxed worker crashed, ran out of time or memory on these bytes.
        case workerFailed = 3
    }

    public var kind: Kind
    public var reason: String
    /// When it failed, nanoseconds since 1970.
    public var created: Int64

    package init(kind: Kind = .rejected, reason: String, created: Int64) {
        self.kind = kind
        self.reason = reason
        self.created = created
    }

    var encoded: [UInt8] {
        var w = ByteWriter(capacity: 10 + reason.utf8.count)
        w.u8(Self.currentVersion)
        w.i64(created)
        w.u8(kind.rawValue)
        w.raw(reason.utf8)
        return w.bytes
    }

    static func decode(_ value: UnsafeRawBufferPointer) -> FailureRecord? {
        var r = ByteReader(value)
        // An unknown kind (a later version's) reads as a rejection: the bytes failed either way.
        guard r.u8() == currentVersion, let created = r.i64(), let kind = r.u8() else { return nil }
        return FailureRecord(kind: Kind(rawValue: kind) ?? .rejected, reason: String(decoding: r.rest(), as: UTF8.self), created: created)
    }

    static func key(content: ContentHash, generatorVersion: UInt32) -> [UInt8] {
        var w = ByteWriter(capacity: 20)
        w.hash(content)
        w.u32BE(generatorVersion)
        return w.bytes
    }
}
