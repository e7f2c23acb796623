/*
 * thumbcache.h: thumbnails and search for programs in C and any language with a C FFI.
 *
 * Link with `pkg-config --cflags --libs thumbcache`. The Swift package is the first-class API;
 * this one is small on purpose: open a cache, get a thumbnail, warm a folder, search, close.
 *
 *     thumbcache *cache;
 *     if (thumbcache_open(NULL, &cache) != THUMBCACHE_OK) { fprintf(stderr, "%s\n", thumbcache_error_message()); ... }
 *     thumbcache_image *image;
 *     if (thumbcache_get(cache, "/photos/cat.jpg", 256, 1.0, THUMBCACHE_KIND_BEST, &image) == THUMBCACHE_OK) {
 *         size_t size;
 *         const uint8_t *png = thumbcache_image_png(image, &size);
 *         ...
 *         thumbcache_image_free(image);
 *     }
 *     thumbcache_close(cache);
 *
 * Every function that can fail returns a thumbcache_status; on failure,
 * thumbcache_error_message() says what happened and to which file. A cache handle may be used
 * from many threads at once; images and results are immutable and may be read from any thread.
 * Files are decoded in sandboxed worker processes (/usr/libexec/thumbcache), never in the caller.
 */
#ifndef THUMBCACHE_H
#define THUMBCACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised when a function is added; never lowered. */
#define THUMBCACHE_API_VERSION 1

/* An open cache. */
typedef struct thumbcache thumbcache;
/* One representation of a file: a thumbnail, a low-quality stand-in, or its type's icon. */
typedef struct thumbcache_image thumbcache_image;
/* The answer to a search. */
typedef struct thumbcache_results thumbcache_results;

typedef enum thumbcache_status {
    THUMBCACHE_OK = 0,
    /* A NULL pointer, an empty path or a size or scale out of range. */
    THUMBCACHE_ERROR_ARGUMENT = 1,
    /* The cache cannot be opened, read or written. */
    THUMBCACHE_ERROR_CACHE = 2,
    /* The file does not exist or cannot be read. */
    THUMBCACHE_ERROR_UNREADABLE = 3,
    /* thumbcache makes no thumbnail of this type of file (ask for the icon too: it always has one). */
    THUMBCACHE_ERROR_UNSUPPORTED = 4,
    /* The file is empty, corrupt, truncated, too large, or its decoder failed or timed out. */
    THUMBCACHE_ERROR_DECODE = 5,
    /* The search query does not parse. */
    THUMBCACHE_ERROR_QUERY = 6,
    /* Anything else; the message says what. */
    THUMBCACHE_ERROR_OTHER = 7
} thumbcache_status;

/* Which representations a request accepts (a mask), and which one an image is. */
typedef enum thumbcache_kind {
    /* The generic icon of the file's type. */
    THUMBCACHE_KIND_ICON = 1,
    /* A fast low-quality image: a JPEG's embedded preview, or a smaller cached thumbnail. */
    THUMBCACHE_KIND_LOW_QUALITY = 2,
    /* The real thumbnail. */
    THUMBCACHE_KIND_THUMBNAIL = 4,
    /* The best one available: the thumbnail, else the low-quality one, else the icon. */
    THUMBCACHE_KIND_BEST = 7,
    /* A large look at one page (thumbcache_get_preview); not part of THUMBCACHE_KIND_BEST. */
    THUMBCACHE_KIND_PREVIEW = 8
} thumbcache_kind;

/* What thumbcache_warm did. */
typedef struct thumbcache_warm_summary {
    uint64_t seen;           /* files walked */
    uint64_t generated;      /* thumbnails made now */
    uint64_t already_cached; /* files whose thumbnails were in the cache */
    uint64_t not_supported;  /* files of a type without thumbnails */
    uint64_t failed;         /* files that could not be read or decoded */
    uint64_t indexed;        /* files added to or updated in the search index */
} thumbcache_warm_summary;

/* The library's version, like "0.9". */
const char *thumbcache_version(void);

/* What the calling thread's last failed call said ("path: reason"); "" if none failed. Valid
 * until this thread's next call into the library. */
const char *thumbcache_error_message(void);

/* The status's name, like "THUMBCACHE_ERROR_DECODE". */
const char *thumbcache_status_name(thumbcache_status status);

/* Opens (creating if needed) the cache in `directory`; NULL for the user's default cache,
 * $XDG_CACHE_HOME/thumbcache, which the thumbcache command and every other app share. A commit
 * is flushed once: a power loss leaves the cache intact and may undo the last thumbnail made,
 * which is then made again. */
thumbcache_status thumbcache_open(const char *directory, thumbcache **cache);

/* Closes the cache; waits for thumbnails it made to be written. No call on it may be running or
 * come after; images and results got from it stay valid until freed. NULL is ignored. */
void thumbcache_close(thumbcache *cache);

/* The thumbnail of the file at `path` fitting a square of `size` points (1 to 4096) at `scale`
 * pixels per point (more than 0, at most 8), from the cache or made now and stored; `kinds` is a
 * mask of the representations accepted (THUMBCACHE_KIND_BEST for any). A second call for the same
 * bytes is a cache hit: one stat and one lookup. Free the image with thumbcache_image_free. */
thumbcache_status thumbcache_get(thumbcache *cache, const char *path, uint32_t size, double scale, unsigned kinds,
                                 thumbcache_image **image);

/* A preview: page `page` (from 0: a document's or a comic's page) of the file, fitting a square of
 * `size` points (1 to 4096) at `scale`, from the cache or made now and stored (previews are evicted
 * before thumbnails). THUMBCACHE_ERROR_UNSUPPORTED, with the message naming how many pages the
 * file has, when it has no such page. Free the image with thumbcache_image_free. */
thumbcache_status thumbcache_get_preview(thumbcache *cache, const char *path, uint32_t page, uint32_t size, double scale,
                                         thumbcache_image **image);

/* Size in pixels. */
uint32_t thumbcache_image_width(const thumbcache_image *image);
uint32_t thumbcache_image_height(const thumbcache_image *image);
/* Which representation it is: one of THUMBCACHE_KIND_ICON, _LOW_QUALITY, _THUMBNAIL or _PREVIEW. */
thumbcache_kind thumbcache_image_kind(const thumbcache_image *image);
/* 1 if it came from the cache without decoding anything, else 0. */
int thumbcache_image_from_cache(const thumbcache_image *image);
/* Why a lesser representation stands in for the thumbnail (the file is corrupt, its decoder
 * failed); NULL when the thumbnail was simply not asked for or the type has none. */
const char *thumbcache_image_stands_in_because(const thumbcache_image *image);
/* The image as PNG bytes, `*size` of them. */
const uint8_t *thumbcache_image_png(const thumbcache_image *image, size_t *size);
/* The pixels: width × height × 4 bytes of 8-bit RGBA, straight alpha, rows top to bottom with no
 * padding; decoded on the first call, NULL if that fails. */
const uint8_t *thumbcache_image_rgba(const thumbcache_image *image);
void thumbcache_image_free(thumbcache_image *image);

/* Makes the 256-point thumbnails of a file or of every file under a directory, and indexes them
 * for search (with the words inside documents). Files that fail are counted, and the walk goes on.
 * `summary` may be NULL. */
thumbcache_status thumbcache_warm(thumbcache *cache, const char *path, thumbcache_warm_summary *summary);

/* Ask thumbcache_search for a snippet of each result's text around the query's words. */
#define THUMBCACHE_SEARCH_SNIPPETS 1u

/* Searches the cache's index with the query language of `thumbcache search` (words,
 * "a phrase", kMDItemPixelWidth >= 1000, ...); at most `limit` results (0: all), best first for
 * a query with words. Free them with thumbcache_results_free. */
thumbcache_status thumbcache_search(thumbcache *cache, const char *query, size_t limit, unsigned flags,
                                    thumbcache_results **results);

/* Results held; thumbcache_results_total counts every match, beyond the limit. */
size_t thumbcache_results_count(const thumbcache_results *results);
size_t thumbcache_results_total(const thumbcache_results *results);
/* The file's path; NULL for an app's item without a file (and for an index out of range). */
const char *thumbcache_results_path(const thumbcache_results *results, size_t index);
/* How well the result matched the query's words; 0 for a query without words. */
double thumbcache_results_score(const thumbcache_results *results, size_t index);
/* About 200 bytes of the file's text around the matched words; NULL without one. */
const char *thumbcache_results_snippet(const thumbcache_results *results, size_t index);
void thumbcache_results_free(thumbcache_results *results);

#ifdef __cplusplus
}
#endif

#endif
