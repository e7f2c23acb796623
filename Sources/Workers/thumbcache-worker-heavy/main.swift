// The sandboxed decoder process for the image libraries that take longest to load: libheif
// (HEIF and AVIF that the image worker's direct path hands on) and libjxl (JPEG XL). Started by
// thumbcache (WorkerPool) for that family only. It confines itself before it reads a byte, then
// decodes the descriptors it is handed.
import ThumbcacheHeavyCodecs
import ThumbcacheImaging
import ThumbcacheSandbox

WorkerMain.run(decoders: .heavy)
