// The worker with hostile test decoders added (HostileDecoders.swift): what the sandbox tests
// start through THUMBCACHE_WORKER. Never a product, never installed.
import ThumbcacheImaging
import ThumbcacheSandbox

import ThumbcacheCodecs

var decoders = ImageDecoders.all
for registration in HostileDecoders.registrations { decoders.register(registration) }
preloadFonts()
WorkerMain.run(decoders: decoders)
