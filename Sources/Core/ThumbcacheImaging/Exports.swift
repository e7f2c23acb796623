// `FileLocation`, which the imaging API takes for paths, comes with it (ThumbcacheSync's other types are package API).
@_exported import ThumbcacheSync
