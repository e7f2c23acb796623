// The sandboxed decoder process for images: started by thumbcache (WorkerPool), one per job,
// reused across files. It confines itself before it reads a byte, then decodes the descriptors
// it is handed. Documents and media have workers of their own (thumbcache-worker-documents,
// thumbcache-worker-media), so this one never loads poppler or FFmpeg; libtiff and LibRaw are
// loaded at their first file, or before the confinement where Landlock would not allow that.
// The same program answers the .thumbnailer plug-in's calls (as thumbcache-thumbnailer, the
// package's other name for it), forking itself into this worker or a documents worker
// (PlugInMain), which alone loads poppler, FreeType or libarchive.
import ThumbcacheCodecs
import ThumbcacheImaging
import ThumbcachePlugIn
import ThumbcacheSandbox

if PlugInMain.isCall(CommandLine.arguments) { PlugInMain.run(CommandLine.arguments) }
WorkerMain.run(decoders: .images)
