// An app needs one `import Thumbcache`: the store, imaging and index types this module's API
// shows (ThumbnailStore, RGBAImage, MetadataIndex, …) come with it. LMDB does not.
@_exported import ThumbcacheImaging
@_exported import ThumbcacheIndex
@_exported import ThumbcacheStore
// A file whose sandboxed decoder failed throws this: it names the path and how the worker ended.
@_exported import struct ThumbcacheWorker.WorkerFailure
// The remote tier an app configures and the summaries that report on it.
@_exported import ThumbcacheRemote
