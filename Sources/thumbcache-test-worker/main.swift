// The worker of every family with hostile test decoders added (HostileDecoders.swift): what the
// sandbox tests start through THUMBCACHE_WORKER. Never a product, never installed.
import ThumbcacheCodecs
import ThumbcacheDocumentCodecs
import ThumbcacheImaging
import ThumbcacheMediaCodecs
import ThumbcacheSandbox
import ThumbcacheVectorCodecs

// Every family in the order each worker tries its own (a registration goes before those already made).
var decoders = ImageDecoders(Array((ImageDecoders.documents.registrations + ImageDecoders.media.registrations
                                    + ImageDecoders.vector.registrations + ImageDecoders.images.registrations).reversed()))
for registration in HostileDecoders.registrations { decoders.register(registration) }
preloadFonts()
WorkerMain.run(decoders: decoders)
