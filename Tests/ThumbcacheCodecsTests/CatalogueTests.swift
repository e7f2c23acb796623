import Testing
import ThumbcacheCodecs
import ThumbcacheDocumentCodecs
import ThumbcacheHeavyCodecs
import ThumbcacheImaging
import ThumbcacheMediaCodecs
import ThumbcacheVectorCodecs

/// The catalogue against the decoders each worker program registers: a format routed to a
/// family whose worker cannot open it, or a decoder the catalogue does not know, fails here.
struct CatalogueTests {
    /// What each family's worker program runs (its `main.swift` passes exactly these).
    static let workers: [WorkerFamily: ImageDecoders] = [
        .images: .images, .vector: .vector, .heavy: .heavy, .documents: .documents, .media: .media,
    ]

    @Test(arguments: WorkerFamily.allCases)
    func everyFormatRoutedToAFamilyIsRegisteredByItsWorker(_ family: WorkerFamily) throws {
        let registered = Set(try #require(Self.workers[family]).registrations.map(\.format))
        for declaration in FormatCatalogue.formats(of: family) {
            #expect(registered.contains(declaration.format), "\(declaration.format) is routed to \(family), whose worker does not register it")
            #expect(WorkerFamily(declaration.format) == family)
        }
    }

    @Test(arguments: WorkerFamily.allCases)
    func everyRegisteredDecoderIsCataloguedForItsFamily(_ family: WorkerFamily) throws {
        for registration in try #require(Self.workers[family]).registrations {
            let declaration = try #require(FormatCatalogue.declaration(of: registration.format),
                                           "\(family) registers \(registration.format), which has no catalogue entry")
            // A worker decodes its own formats, or those another family hands on to it (HEIF to libheif).
            #expect(declaration.family == family || declaration.family.mayHandOnTo.contains(family),
                    "\(family) registers \(registration.format), which the catalogue routes to \(declaration.family)")
            // Detection in the worker is the catalogue's, not a copy of it.
            #expect(registration.typeIdentifier == declaration.typeIdentifier)
            #expect(registration.magic == declaration.magic && registration.sniffer == declaration.sniffer)
        }
    }

    /// The formats the warm reads words from are exactly those whose decoder extracts them, in
    /// the worker the catalogue routes them to.
    @Test func theFormatsWithWordsAreThoseWhoseDecoderReadsThem() throws {
        var extracting = Set<ImageFormat>()
        for declaration in FormatCatalogue.all {
            let registration = try #require(Self.workers[declaration.family]?.registrations.first { $0.format == declaration.format })
            if registration.extractText != nil { extracting.insert(declaration.format) }
        }
        #expect(extracting == FormatCatalogue.withWords)
    }

    @Test func everyFormatHasOneEntryAndAName() {
        var formats = Set<ImageFormat>(), types = Set<ContentType>()
        for declaration in FormatCatalogue.all {
            #expect(formats.insert(declaration.format).inserted, "\(declaration.format) is declared twice")
            #expect(types.insert(declaration.type).inserted, "\(declaration.type) is declared twice")
            #expect(!declaration.displayName.isEmpty && declaration.displayName != declaration.typeIdentifier)
            #expect(declaration.type.displayName == declaration.displayName)
            #expect(!declaration.conformsTo.isEmpty && !declaration.mimeType.isEmpty)
            #expect(declaration.format == .text || !declaration.extensions.isEmpty, "\(declaration.format) has no extension")
        }
        // The bug this fixed: a comic book was "not a valid org.freedesktop.mime.application.vnd.comicbook+zip".
        #expect(FormatDeclaration.comicZIP.type.displayName == "comic book archive")
        // A text type shared-mime-info names is called by its MIME type, not its identifier.
        #expect(ContentType("org.freedesktop.mime.text.x-rust").displayName == "text/x-rust file")
        #expect(ContentType("com.example.own").displayName == "com.example.own")
    }

    @Test func detectionFindsEachFormatByItsOwnRulesOnly() {
        #expect(ImageDecoders.images.format(of: Array("qoif".utf8) + [0, 0, 0, 1, 0, 0, 0, 1, 4, 0], name: "x.qoi") == .qoi)
        #expect(FormatCatalogue.declaration(ofType: "public.jpeg-xl") == .jpegXL)
        #expect(WorkerFamily(.jpegXL) == .heavy && WorkerFamily(.svg) == .vector && WorkerFamily(.qoi) == .images)
        #expect(WorkerFamily(ImageFormat(rawValue: "not-catalogued")) == .images)
    }
}

extension ImageDecoders {
    fileprivate func format(of head: [UInt8], name: String) -> ImageFormat? {
        head.withUnsafeBytes { format(of: $0, name: name) }
    }
}
