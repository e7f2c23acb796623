// An index error's cause (an LMDB error with its code) can be named by an app that imports the index alone.
@_exported import struct ThumbcacheLMDB.LMDBError
