"""Thumbnails and search from Python, over thumbcache's C library (libthumbcache.so.1).

    import thumbcache

    with thumbcache.Cache() as cache:                 # the user's default cache, shared with the CLI
        cache.warm("/home/me/Pictures")               # thumbnails made, files indexed for search
        thumb = cache.get("/home/me/Pictures/cat.jpg", size=256)
        open("cat.png", "wb").write(thumb.png)
        for result in cache.search('"annual report"', snippets=True):
            print(result.path, result.score, result.snippet)

Files are decoded in sandboxed worker processes, never in Python. A failure raises
ThumbcacheError, whose message names the file and the reason. A Cache may be used from several
threads at once; calls release the GIL while they work. The library is looked for as
libthumbcache.so.1, or where $THUMBCACHE_LIBRARY says.
"""

import ctypes
import os

__all__ = ["Cache", "Thumbnail", "Result", "WarmSummary", "ThumbcacheError", "version"]

KINDS = {"icon": 1, "low": 2, "thumbnail": 4, "best": 7}
_KIND_NAMES = {1: "icon", 2: "low", 4: "thumbnail", 8: "preview"}
_SNIPPETS = 1
_ERROR_OTHER = 7


class ThumbcacheError(Exception):
    """A call failed: `status` names the class of failure (like "THUMBCACHE_ERROR_DECODE"),
    the message says what happened and to which file."""

    def __init__(self, code, status, message):
        super().__init__(message)
        self.code = code
        self.status = status


class WarmSummary(ctypes.Structure):
    """What `Cache.warm` did (the C API's thumbcache_warm_summary)."""

    _fields_ = [(name, ctypes.c_uint64) for name in
                ("seen", "generated", "already_cached", "not_supported", "failed", "indexed")]

    def __repr__(self):
        return "WarmSummary(%s)" % ", ".join("%s=%d" % (n, getattr(self, n)) for n, _ in self._fields_)


def _load():
    name = os.environ.get("THUMBCACHE_LIBRARY") or "libthumbcache.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError as error:
        raise ImportError("thumbcache: cannot load %s (%s): install the libthumbcache1 package, or set "
                          "THUMBCACHE_LIBRARY to the library's path" % (name, error)) from error
    p, c_char_p, c_size_t = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    signatures = {
        "thumbcache_version": ([], c_char_p),
        "thumbcache_error_message": ([], c_char_p),
        "thumbcache_status_name": ([ctypes.c_int], c_char_p),
        "thumbcache_open": ([c_char_p, ctypes.POINTER(p)], ctypes.c_int),
        "thumbcache_close": ([p], None),
        "thumbcache_get": ([p, c_char_p, ctypes.c_uint32, ctypes.c_double, ctypes.c_uint, ctypes.POINTER(p)], ctypes.c_int),
        "thumbcache_get_preview": ([p, c_char_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_double, ctypes.POINTER(p)], ctypes.c_int),
        "thumbcache_image_width": ([p], ctypes.c_uint32),
        "thumbcache_image_height": ([p], ctypes.c_uint32),
        "thumbcache_image_kind": ([p], ctypes.c_int),
        "thumbcache_image_from_cache": ([p], ctypes.c_int),
        "thumbcache_image_stands_in_because": ([p], c_char_p),
        "thumbcache_image_png": ([p, ctypes.POINTER(c_size_t)], ctypes.POINTER(ctypes.c_uint8)),
        "thumbcache_image_rgba": ([p], ctypes.POINTER(ctypes.c_uint8)),
        "thumbcache_image_free": ([p], None),
        "thumbcache_warm": ([p, c_char_p, ctypes.POINTER(WarmSummary)], ctypes.c_int),
        "thumbcache_search": ([p, c_char_p, c_size_t, ctypes.c_uint, ctypes.POINTER(p)], ctypes.c_int),
        "thumbcache_results_count": ([p], c_size_t),
        "thumbcache_results_total": ([p], c_size_t),
        "thumbcache_results_path": ([p, c_size_t], c_char_p),
        "thumbcache_results_score": ([p, c_size_t], ctypes.c_double),
        "thumbcache_results_snippet": ([p, c_size_t], c_char_p),
        "thumbcache_results_free": ([p], None),
    }
    for name, (arguments, result) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = arguments
        function.restype = result
    return lib


_lib = _load()


def version():
    """The library's version, like "0.9"."""
    return _lib.thumbcache_version().decode()


def _check(code):
    if code != 0:
        message = _lib.thumbcache_error_message().decode(errors="replace")
        raise ThumbcacheError(code, _lib.thumbcache_status_name(code).decode(), message)


def _path(path):
    return os.fsencode(path)


def _text(value):
    return None if value is None else value.decode(errors="replace")


class Thumbnail:
    """One representation of a file: `kind` is "thumbnail", "low" (a fast stand-in), "icon" or "preview"."""

    def __init__(self, handle):
        self._handle = handle
        self.width = _lib.thumbcache_image_width(handle)
        self.height = _lib.thumbcache_image_height(handle)
        self.kind = _KIND_NAMES.get(_lib.thumbcache_image_kind(handle), "thumbnail")
        self.from_cache = bool(_lib.thumbcache_image_from_cache(handle))
        # Why a lesser representation stands in for the thumbnail (a corrupt file); else None.
        self.stands_in_because = _text(_lib.thumbcache_image_stands_in_because(handle))
        size = ctypes.c_size_t()
        data = _lib.thumbcache_image_png(handle, ctypes.byref(size))
        self.png = ctypes.string_at(data, size.value)
        self._rgba = None

    @property
    def rgba(self):
        """width × height × 4 bytes of 8-bit RGBA, straight alpha, rows top to bottom."""
        if self._rgba is None:
            data = _lib.thumbcache_image_rgba(self._handle)
            if not data:
                _check(_ERROR_OTHER)
            self._rgba = ctypes.string_at(data, self.width * self.height * 4)
        return self._rgba

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.thumbcache_image_free(self._handle)
            self._handle = None

    def __repr__(self):
        return "Thumbnail(%s %dx%d%s)" % (self.kind, self.width, self.height, ", from the cache" if self.from_cache else "")


class Result:
    """A search result: the file's `path` (None for an app's item), its `score` for a query
    with words, and a `snippet` of its text when asked for."""

    __slots__ = ("path", "score", "snippet")

    def __init__(self, path, score, snippet):
        self.path, self.score, self.snippet = path, score, snippet

    def __repr__(self):
        return "Result(%r, score=%.3f)" % (self.path, self.score)


class Cache:
    """An open cache: `directory`, or None for the user's default ($XDG_CACHE_HOME/thumbcache)."""

    def __init__(self, directory=None):
        handle = ctypes.c_void_p()
        _check(_lib.thumbcache_open(None if directory is None else _path(directory), ctypes.byref(handle)))
        self._handle = handle

    def get(self, path, size=256, scale=1.0, kind="best"):
        """The file's thumbnail fitting `size` points at `scale` pixels per point, from the cache
        or made now; `kind` is "best", "thumbnail", "low", "icon", or several joined by "|"."""
        mask = 0
        for name in kind.split("|"):
            if name not in KINDS:
                raise ValueError("kind must be best, thumbnail, low or icon (or several joined by |), got %r" % kind)
            mask |= KINDS[name]
        image = ctypes.c_void_p()
        _check(_lib.thumbcache_get(self._open(), _path(path), size, scale, mask, ctypes.byref(image)))
        return Thumbnail(image)

    def preview(self, path, page=1, size=1024, scale=1.0):
        """A large look at page `page` (from 1) of the file, fitting `size` points at `scale`, from
        the cache or made now; ThumbcacheError (status UNSUPPORTED) when the file has no such page."""
        if page < 1:
            raise ValueError("page counts from 1, got %r" % page)
        image = ctypes.c_void_p()
        _check(_lib.thumbcache_get_preview(self._open(), _path(path), page - 1, size, scale, ctypes.byref(image)))
        return Thumbnail(image)

    def warm(self, path):
        """Makes the thumbnails of a file or of every file under a folder, and indexes them."""
        summary = WarmSummary()
        _check(_lib.thumbcache_warm(self._open(), _path(path), ctypes.byref(summary)))
        return summary

    def search(self, query, limit=100, snippets=False):
        """Results of a query in `thumbcache search`'s language, best first; `limit` 0 for all."""
        results = ctypes.c_void_p()
        _check(_lib.thumbcache_search(self._open(), query.encode(), limit, _SNIPPETS if snippets else 0, ctypes.byref(results)))
        try:
            return [Result(_text(_lib.thumbcache_results_path(results, i)), _lib.thumbcache_results_score(results, i),
                           _text(_lib.thumbcache_results_snippet(results, i)))
                    for i in range(_lib.thumbcache_results_count(results))]
        finally:
            _lib.thumbcache_results_free(results)

    def close(self):
        """Closes the cache (also done when it is collected, or at the end of a `with`)."""
        if getattr(self, "_handle", None):
            _lib.thumbcache_close(self._handle)
            self._handle = None

    def _open(self):
        if not self._handle:
            raise ValueError("the cache is closed")
        return self._handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
