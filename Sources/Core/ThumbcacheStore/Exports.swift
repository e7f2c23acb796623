// What a store error can carry as its cause (an `LMDBError`, an `Errno`) and `FileLocation`, which
// its API takes for paths, come with the store: an app needs no import of the modules they live in;
// so does what its check reports (the index's check reports the same).
// ThumbcacheSync's other types are package API, so the export shows nothing else.
@_exported import struct ThumbcacheLMDB.LMDBError
@_exported import struct ThumbcacheLMDB.IntegrityReport
@_exported import struct ThumbcacheLMDB.IntegrityFinding
@_exported import ThumbcacheSync
// `URL` as a `FileLocation`.
@_exported import ThumbcacheFileURL
