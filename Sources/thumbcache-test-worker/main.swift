// The worker with hostile test decoders added (HostileDecoders.swift): what the sandbox tests
// start through THUMBCACHE_WORKER. Never a product, never installed.
import ThumbcacheImaging
import ThumbcacheSandbox

var decoders = ImageDecoders.standard
for registration in HostileDecoders.registrations { decoders.register(registration) }
WorkerMain.run(decoders: decoders)
