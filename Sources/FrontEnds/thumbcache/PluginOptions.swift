import ArgumentParser
import Thumbcache

/// Whether the desktop's `.thumbnailer` plug-ins serve the types thumbcache has no decoder of.
struct PluginOptions: ParsableArguments {
    @Flag(name: .long, inversion: .prefixedNo, help: ArgumentHelp(
        "Run installed .thumbnailer plug-ins (~/.local/share/thumbnailers, then $XDG_DATA_DIRS) in a bubblewrap sandbox for types thumbcache does not decode itself."))
    var plugins = true

    /// The providers and the content types they are matched by: the plug-ins first, so that a
    /// built-in decoder wins for any type both handle.
    func providers(_ decoder: DecoderOptions) -> (providers: [any ThumbnailProvider], types: ContentTypeRegistry) {
        var types = ContentTypeRegistry()
        return (Self.providers(plugins: plugins, isolation: decoder.isolation(), types: &types), types)
    }

    /// The same, from values (a call read without ArgumentParser); the plug-ins' types go into `types`.
    static func providers(plugins: Bool, isolation: DecoderIsolation, types: inout ContentTypeRegistry) -> [any ThumbnailProvider] {
        guard plugins else { return [ImageThumbnailProvider()] }
        let plugin = ThumbnailerPluginProvider(types: &types, limits: .init(timeout: isolation.timeout, memoryLimit: isolation.memoryLimit))
        return plugin.plugins.isEmpty ? [ImageThumbnailProvider()] : [plugin, ImageThumbnailProvider()]
    }
}
