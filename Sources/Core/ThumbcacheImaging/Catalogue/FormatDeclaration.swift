/// One file format thumbcache decodes, declared once: its name, how its files are told from
/// other bytes, where it sits in the type tree and which worker family decodes it.
///
/// The content-type registry, display names, the pool's routing and each decoder's detection
/// are derived from these (``FormatCatalogue``); a decoder module adds only the code that opens
/// the format (Docs/ARCHITECTURE.md, "Adding a format").
package struct FormatDeclaration: Sendable, Hashable {
    /// The short name the worker protocol, errors and the index use (`jxl`).
    package let format: ImageFormat
    /// The uniform type identifier of its files (`public.jpeg-xl`).
    package let type: ContentType
    /// What a person calls it: "JPEG XL image".
    package let displayName: String
    /// shared-mime-info's name for it (`image/jxl`).
    package let mimeType: String
    /// Filename extensions, lower case, without the dot.
    package let extensions: [String]
    /// Any one of these identifies the format.
    package let magic: [Magic]
    /// A check of a file's first bytes for formats fixed offsets cannot tell (SVG's root element
    /// after an XML prologue); tried before magic, so it may claim files of a more general format.
    package let sniffer: Sniffer?
    /// The types it is a kind of (`public.image`; a comic book is also a ZIP archive).
    package let conformsTo: [ContentType]
    /// What its files hold, for the metadata and the icon.
    package let kind: Kind
    /// The worker program that decodes it.
    package let family: WorkerFamily

    /// What a format's files hold.
    package enum Kind: String, Sendable, Hashable {
        case image, movie, audio, document, text, font

        package var defaultFamily: WorkerFamily {
            switch self {
            case .image: .images
            case .movie, .audio: .media
            case .document, .text, .font: .documents
            }
        }
    }

    /// A format of `kind`, decoded by the family `family` or, by default, the kind's: images by
    /// the image worker, video and audio by the media worker, the rest by the document worker.
    package init(_ format: ImageFormat, type: ContentType, name: String, mimeType: String, extensions: [String],
                 magic: [Magic] = [], sniffer: Sniffer? = nil, conformsTo: [ContentType], kind: Kind = .image,
                 family: WorkerFamily? = nil) {
        self.format = format
        self.type = type
        self.displayName = name
        self.mimeType = mimeType
        self.extensions = extensions
        self.magic = magic
        self.sniffer = sniffer
        self.conformsTo = conformsTo
        self.kind = kind
        self.family = family ?? kind.defaultFamily
    }

    /// The type identifier as a string (`public.jpeg-xl`).
    package var typeIdentifier: String { type.identifier }

    /// True if `head` (a file's first bytes) is this format by its magic or its sniffer alone.
    package func matches(_ head: UnsafeRawBufferPointer) -> Bool {
        magic.contains { $0.matches(head) } || sniffer.map { !$0.needsExtension && $0.test(head) } == true
    }

    /// A named test of a file's start (`head`, at most ``span`` bytes).
    package struct Sniffer: Sendable, Hashable {
        package var name: String
        /// Bytes of the file's start it wants to see.
        package var span: Int
        package var test: @Sendable (UnsafeRawBufferPointer) -> Bool
        /// For formats without any signature (TGA): tried only after every magic, and only for a
        /// file whose name has one of the format's extensions. Name and bytes must agree.
        package var needsExtension: Bool

        package init(name: String, span: Int, needsExtension: Bool = false, test: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) {
            self.name = name
            self.span = span
            self.needsExtension = needsExtension
            self.test = test
        }

        package static func == (a: Sniffer, b: Sniffer) -> Bool { a.name == b.name }
        package func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }
}
