// `FileLocation`, which the imaging API takes for paths, comes with it (ThumbcacheSync's other types are package API);
// `URL`'s conformance to it comes with the store, the index and the library, not here: the worker
// programs link this module, and with it they linked Foundation.
@_exported import ThumbcacheSync
