// What a store error can carry as its cause (an `LMDBError`, an `Errno`) and `FileLocation`, which
// its API takes for paths, come with the store: an app needs no import of the modules they live in.
// ThumbcacheSync's other types are package API, so the export shows nothing else.
@_exported import struct ThumbcacheLMDB.LMDBError
@_exported import ThumbcacheSync
