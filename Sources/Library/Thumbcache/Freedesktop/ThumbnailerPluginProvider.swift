import ThumbcacheImaging
import ThumbcacheStore
import ThumbcacheWorker

/// The installed `.thumbnailer` plug-ins as a provider, for the types no built-in decoder reads
/// (DjVu, PostScript, XPM…): each runs in ``PluginSandbox``, and what it writes is decoded where
/// the built-in decoders run (a sandboxed worker, as a rule) and stored like any thumbnail.
package struct ThumbnailerPluginProvider: ThumbnailProvider {
    /// The plug-in for each type it serves (the first installed for a MIME type wins).
    package let plugins: [ContentType: ThumbnailerEntry]
    package let limits: PluginSandbox.Limits

    package var contentTypes: Set<ContentType> { Set(plugins.keys) }

    /// The runnable plug-ins among `entries` for every MIME type whose content type is not in
    /// `native`; a MIME type `types` does not know is declared there (named by shared-mime-info's
    /// globs for it, under image, movie, audio or data as its top-level type says).
    package init(entries: [ThumbnailerEntry] = ThumbnailerEntry.installed(), types: inout ContentTypeRegistry,
                native: Set<ContentType> = ImageThumbnailProvider().contentTypes, limits: PluginSandbox.Limits = .init()) {
        var plugins: [ContentType: ThumbnailerEntry] = [:]
        let mime = SharedMIMEInfo.system
        var known = types.typesByMIMEType()
        for entry in entries where entry.isRunnable {
            for m in entry.mimeTypes {
                let mimeType = mime.canonical(m)
                let type: ContentType
                if let existing = known[mimeType] ?? known[m] {
                    type = existing
                } else {
                    type = TextTypes.identifier(mimeType: mimeType)
                    let family: ContentType = switch mimeType.split(separator: "/").first {
                    case "image": .image
                    case "video": .movie
                    case "audio": .audio
                    default: .data
                    }
                    var declaration = ContentTypeDeclaration(type, conformsTo: [family], mimeType: mimeType)
                    // Names no declared type claims: a plug-in's type never takes a name from a built-in one.
                    for (pattern, globbed) in mime.globs where globbed == mimeType {
                        let name = pattern.hasPrefix("*.") ? "file." + pattern.dropFirst(2) : pattern
                        guard types.type(forFilename: name) == nil else { continue }
                        if pattern.hasPrefix("*.") { declaration.extensions.append(String(pattern.dropFirst(2))) } else { declaration.filenames.append(pattern) }
                    }
                    // A name is what finds these types: with none, nothing would ever be detected as one.
                    guard !declaration.extensions.isEmpty || !declaration.filenames.isEmpty else { continue }
                    types.declare(declaration)
                    known[mimeType] = type
                }
                if !native.contains(type) && plugins[type] == nil { plugins[type] = entry }
            }
        }
        self.plugins = plugins
        self.limits = limits
    }

    package func provideThumbnail(for request: ThumbnailProviderRequest) throws -> ThumbnailReply {
        guard let plugin = plugins[request.contentType] else {
            throw PluginSandbox.Failure(plugin: "(none)", reason: .noPlugin(request.contentType))
        }
        let size = max(request.maximumWidth, request.maximumHeight)
        let options = ThumbnailOptions(maxWidth: request.maximumWidth, maxHeight: request.maximumHeight, mode: request.mode,
                                       linearLight: request.linearLight)
        return try PluginSandbox.run(plugin, input: request.path, size: size, limits: limits) { output in
            // The plug-in's PNG is as untrusted as the file it read: decoded like any file.
            let decoding = request.decoding ?? InProcessDecoding()
            do {
                return .pixels(try decoding.thumbnail(ofFileAt: output, options: options, format: nil).0)
            } catch {
                throw PluginSandbox.Failure(plugin: plugin.name, reason: .unreadableOutput("\(error)"))
            }
        }
    }

    /// A failure of a plug-in is recorded against the content and that plug-in: another plug-in
    /// (or a new version of its Exec line) tries the same bytes again.
    func failureVersion(for type: ContentType) -> UInt32? {
        guard let plugin = plugins[type] else { return nil }
        let digest = MD5.digest(Array((plugin.name + "\n" + plugin.exec).utf8))
        return (UInt32(digest[0]) << 24 | UInt32(digest[1]) << 16 | UInt32(digest[2]) << 8 | UInt32(digest[3])) | 0x8000_0000
    }
}

extension ContentTypeRegistry {
    /// Every declared type by its MIME type.
    func typesByMIMEType() -> [String: ContentType] {
        var out: [String: ContentType] = [:]
        for (type, declaration) in declarations { if let m = declaration.mimeType, out[m] == nil { out[m] = type } }
        return out
    }
}
