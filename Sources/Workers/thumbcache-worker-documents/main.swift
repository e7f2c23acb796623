// The sandboxed decoder process for documents (PDF, text, fonts, archive-borne documents):
// started by thumbcache (WorkerPool) for that family only. It loads its fonts, confines itself
// before it reads a byte, then decodes the descriptors it is handed. libarchive is loaded at the
// first archive-borne document, or before the confinement where Landlock would not allow that.
import ThumbcacheDocumentCodecs
import ThumbcacheImaging
import ThumbcacheSandbox

preloadFonts()
WorkerMain.run(decoders: .documents)
