// The sandboxed decoder process for SVG (librsvg, cairo, pango): started by thumbcache
// (WorkerPool) for that family only. It confines itself before it reads a byte, then decodes the
// descriptors it is handed.
import ThumbcacheImaging
import ThumbcacheSandbox
import ThumbcacheVectorCodecs

WorkerMain.run(decoders: .vector)
