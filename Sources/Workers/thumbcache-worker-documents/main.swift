// The sandboxed decoder process for documents (PDF, text, fonts, archive-borne documents):
// started by thumbcache (WorkerPool) for that family only. It confines itself before it reads a
// byte, then decodes the descriptors it is handed. libarchive, the text pages' fonts and iconv's
// tables are read at their first use, or before the confinement where Landlock would not allow that.
import ThumbcacheDocumentCodecs
import ThumbcacheImaging
import ThumbcacheSandbox

WorkerMain.run(decoders: .documents)
