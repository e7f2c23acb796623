// The worker of every family with hostile test decoders added (HostileDecoders.swift): what the
// sandbox tests start through THUMBCACHE_WORKER. Never a product, never installed.
import ThumbcacheCodecs
import ThumbcacheDocumentCodecs
import ThumbcacheHeavyCodecs
import ThumbcacheImaging
import ThumbcacheMediaCodecs
import ThumbcacheSandbox
import ThumbcacheVectorCodecs

// Every family in the order each worker tries its own (a registration goes before those already made).
var decoders = ImageDecoders(Array((ImageDecoders.documents.registrations + ImageDecoders.media.registrations
                                    + ImageDecoders.vector.registrations + ImageDecoders.heavy.registrations
                                    + ImageDecoders.images.registrations).reversed()))
// HEIF and AVIF as the two image workers decode them together: directly, else through libheif here.
decoders.register(.directHEIF(.heif, fallback: ImageDecoderRegistration.libheif))
decoders.register(.directHEIF(.avif, fallback: ImageDecoderRegistration.libheif))
for registration in HostileDecoders.registrations { decoders.register(registration) }
preloadFonts()
WorkerMain.run(decoders: decoders)
