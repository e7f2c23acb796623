// An index error's cause (an `LMDBError`) and `FileLocation` come with the index (see the store's Exports.swift).
@_exported import struct ThumbcacheLMDB.LMDBError
@_exported import ThumbcacheSync
// `URL` as a `FileLocation`.
@_exported import ThumbcacheFileURL
