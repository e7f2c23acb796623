// The sandboxed decoder process for video and audio (FFmpeg): started by thumbcache (WorkerPool)
// for that family only. It confines itself before it reads a byte, then decodes the descriptors
// it is handed.
import ThumbcacheImaging
import ThumbcacheMediaCodecs
import ThumbcacheSandbox

WorkerMain.run(decoders: .media)
