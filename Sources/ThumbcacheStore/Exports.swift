// The errors a store error can carry as its cause come with the store, so an app can catch
// `Errno.noSpaceLeft` or compare an `LMDBError` without importing the modules they live in.
@_exported import struct ThumbcacheLMDB.LMDBError
@_exported import struct ThumbcacheSync.Errno
