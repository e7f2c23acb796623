// The sandboxed decoder process: started by thumbcache (WorkerPool), one per job, reused across
// files. It confines itself before it reads a byte, then decodes the descriptors it is handed.
import ThumbcacheImaging
import ThumbcacheCodecs
import ThumbcacheSandbox

preloadFonts()
WorkerMain.run(decoders: .all)
