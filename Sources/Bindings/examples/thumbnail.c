/*
 * thumbnail.c: the C API in one program. Warms a folder into a cache, writes one file's
 * thumbnail as PNG, and searches.
 *
 *     cc thumbnail.c $(pkg-config --cflags --libs thumbcache) -o thumbnail
 *     ./thumbnail ~/.cache/thumbcache ~/Pictures ~/Pictures/cat.jpg cat.png 'kind:image'
 */
#include <stdio.h>
#include <thumbcache.h>

static int fail(const char *what, thumbcache_status status) {
    fprintf(stderr, "thumbnail: %s: %s: %s\n", what, thumbcache_status_name(status), thumbcache_error_message());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: thumbnail CACHE FOLDER FILE OUT.png QUERY\n");
        return 2;
    }
    thumbcache *cache;
    thumbcache_status status = thumbcache_open(argv[1], &cache);
    if (status != THUMBCACHE_OK) return fail("open", status);

    thumbcache_warm_summary warmed;
    status = thumbcache_warm(cache, argv[2], &warmed);
    if (status != THUMBCACHE_OK) return fail("warm", status);
    printf("warmed %llu files: %llu made, %llu cached, %llu failed\n", (unsigned long long)warmed.seen,
           (unsigned long long)warmed.generated, (unsigned long long)warmed.already_cached, (unsigned long long)warmed.failed);

    thumbcache_image *image;
    status = thumbcache_get(cache, argv[3], 256, 1.0, THUMBCACHE_KIND_THUMBNAIL, &image);
    if (status != THUMBCACHE_OK) return fail("get", status);
    size_t size;
    const uint8_t *png = thumbcache_image_png(image, &size);
    FILE *out = fopen(argv[4], "wb");
    if (!out || fwrite(png, 1, size, out) != size || fclose(out) != 0) {
        perror(argv[4]);
        return 1;
    }
    printf("thumbnail %ux%u%s\n", thumbcache_image_width(image), thumbcache_image_height(image),
           thumbcache_image_from_cache(image) ? " from the cache" : "");
    thumbcache_image_free(image);

    thumbcache_results *results;
    status = thumbcache_search(cache, argv[5], 10, THUMBCACHE_SEARCH_SNIPPETS, &results);
    if (status != THUMBCACHE_OK) return fail("search", status);
    printf("%zu found\n", thumbcache_results_total(results));
    for (size_t i = 0; i < thumbcache_results_count(results); i++) {
        const char *path = thumbcache_results_path(results, i);
        printf("%s\n", path ? path : "(an app's item)");
    }
    thumbcache_results_free(results);
    thumbcache_close(cache);
    return 0;
}
