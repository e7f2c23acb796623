// PNG writing: the chunks by hand, the image data deflated by ISA-L's igzip (level 1, zlib
// wrapped) with the Up filter: far faster than libpng's zlib for about the same size
// (Docs/IMAGING.md, "PNG output").
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cpng.h"

typedef struct {
    uint8_t *data;
    size_t length;
    size_t capacity;
} buffer;

static int reserve(buffer *b, size_t more) {
    if (b->length + more <= b->capacity) return 1;
    size_t capacity = b->capacity ? b->capacity : 16384;
    while (capacity < b->length + more) capacity *= 2;
    uint8_t *data = realloc(b->data, capacity);
    if (!data) return 0;
    b->data = data;
    b->capacity = capacity;
    return 1;
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/// Appends a chunk's length, type, `parts` and CRC.
static int chunk(buffer *b, const char type[4], const uint8_t *const *parts, const size_t *lengths, int count) {
    size_t total = 0;
    for (int i = 0; i < count; i++) total += lengths[i];
    if (total > 0x7fffffff || !reserve(b, total + 12)) return 0;
    uint8_t *start = b->data + b->length;
    put32(start, (uint32_t)total);
    memcpy(start + 4, type, 4);
    size_t at = 8;
    for (int i = 0; i < count; i++) {
        if (lengths[i]) memcpy(start + at, parts[i], lengths[i]);
        at += lengths[i];
    }
    put32(start + at, (uint32_t)crc32(0, start + 4, (uInt)(total + 4)));
    b->length += total + 12;
    return 1;
}

/// A thread's deflate state, level buffer and block of filtered rows (about 500 KB), made once and
/// freed with the thread: allocating them per thumbnail cost as much as the deflating.
typedef struct {
    struct isal_zstream stream;
    uint8_t level_buffer[ISAL_DEF_LVL1_DEFAULT];
    uint8_t block[131072];
} deflater;

static pthread_key_t deflater_key;
static pthread_once_t deflater_once = PTHREAD_ONCE_INIT;
static void make_key(void) { pthread_key_create(&deflater_key, free); }

static deflater *thread_deflater(void) {
    pthread_once(&deflater_once, make_key);
    deflater *d = pthread_getspecific(deflater_key);
    if (!d) {
        d = malloc(sizeof *d);
        if (d && pthread_setspecific(deflater_key, d) != 0) {
            free(d);
            d = NULL;
        }
    }
    return d;
}

/// A row's Up filter (`above` NULL: the row as it is), with no branch in the loop so that it
/// vectorises.
static void up_rgba(uint8_t *restrict out, const uint8_t *restrict row, const uint8_t *restrict above, size_t n) {
    if (!above) {
        memcpy(out, row, n);
        return;
    }
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(row[i] - above[i]);
}

/// The same for opaque pixels, their 4th byte dropped: one pixel at a time, the tail of the SIMD
/// version and the whole row where it is missing.
static void up_rgb_scalar(uint8_t *restrict out, const uint8_t *restrict row, const uint8_t *restrict above, size_t from, size_t width) {
    for (size_t x = from; x < width; x++)
        for (int c = 0; c < 3; c++) out[3 * x + c] = (uint8_t)(row[4 * x + c] - (above ? above[4 * x + c] : 0));
}

#if defined(__x86_64__)
#include <immintrin.h>

/// Four pixels at a time: subtracted as 16 bytes, packed to 12 by a shuffle (SSSE3), and stored
/// as 16, the next store covering the spare 4; the last pixels by `up_rgb_scalar`, so nothing is
/// written past the row. The parent filters every thumbnail it stores, so this is on a warm's hot
/// path (Docs/IMAGING.md, "PNG output").
__attribute__((target("ssse3"))) static void up_rgb_ssse3(uint8_t *restrict out, const uint8_t *restrict row,
                                                           const uint8_t *restrict above, size_t width) {
    const __m128i pack = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    size_t x = 0;
    for (; x + 5 < width; x += 4) {  // 4 pixels read, 16 bytes written: 4 pixels to spare after them
        __m128i p = _mm_loadu_si128((const __m128i *)(row + 4 * x));
        if (above) p = _mm_sub_epi8(p, _mm_loadu_si128((const __m128i *)(above + 4 * x)));
        _mm_storeu_si128((__m128i *)(out + 3 * x), _mm_shuffle_epi8(p, pack));
    }
    up_rgb_scalar(out, row, above, x, width);
}
#endif

static void up_rgb(uint8_t *restrict out, const uint8_t *restrict row, const uint8_t *restrict above, size_t width) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("ssse3")) {
        up_rgb_ssse3(out, row, above, width);
        return;
    }
#endif
    up_rgb_scalar(out, row, above, 0, width);
}

/// Deflates `length` bytes into `b` (growing it), the last call with `last` set.
static int deflate_into(buffer *b, struct isal_zstream *s, uint8_t *bytes, size_t length, int last) {
    s->next_in = bytes;
    s->avail_in = (uint32_t)length;
    s->end_of_stream = last ? 1 : 0;
    do {
        if (b->capacity - b->length < 4096 && !reserve(b, b->capacity)) return 0;
        s->next_out = b->data + b->length;
        s->avail_out = (uint32_t)(b->capacity - b->length > 0x40000000 ? 0x40000000 : b->capacity - b->length);
        uint32_t before = s->avail_out;
        if (isal_deflate(s) != COMP_OK) return 0;
        b->length += before - s->avail_out;
    } while (s->avail_in > 0 || (last && s->internal_state.state != ZSTATE_END));
    return 1;
}

cpng_status cpng_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int has_alpha,
                             const uint8_t *exif, size_t exif_length, const char *const *text, size_t text_count,
                             uint8_t **out, size_t *out_length, char *message, size_t message_size) {
    const size_t channels = has_alpha ? 4 : 3, row_bytes = (size_t)width * channels;
    if (width == 0 || height == 0 || width > 0x7fffffff || height > 0x7fffffff || row_bytes > 0x7ffffff0) {
        snprintf(message, message_size, "cannot write a %ux%u PNG", width, height);
        return CPNG_ERROR;
    }
    deflater *d = thread_deflater();
    buffer b = {0};
    uint8_t *rows = NULL;
    if (!d) goto oom;
    // The filtered rows (each after its filter type byte) gathered into blocks of 128 KB (one
    // row of a wider image): deflate called per row spent more in copying than in deflating.
    const size_t filtered_row = row_bytes + 1;
    const size_t rows_per_block = filtered_row > sizeof d->block ? 1 : sizeof d->block / filtered_row;
    uint8_t *block = filtered_row > sizeof d->block ? (rows = malloc(filtered_row)) : d->block;
    if (!block || !reserve(&b, 8 + 25 + row_bytes / 4 + 1024)) goto oom;
    static const uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    memcpy(b.data, signature, 8);
    b.length = 8;
    uint8_t header[13];
    put32(header, width);
    put32(header + 4, height);
    header[8] = 8;                   // bits per sample
    header[9] = has_alpha ? 6 : 2;   // RGBA or RGB
    header[10] = header[11] = header[12] = 0;  // deflate, adaptive filtering, not interlaced
    const uint8_t *header_part[1] = {header};
    size_t header_length[1] = {13};
    if (!chunk(&b, "IHDR", header_part, header_length, 1)) goto oom;
    if (exif && exif_length > 0) {
        const uint8_t *exif_part[1] = {exif};
        if (!chunk(&b, "eXIf", exif_part, &exif_length, 1)) goto oom;
    }
    for (size_t i = 0; i < text_count; i++) {
        static const uint8_t separator = 0;
        const uint8_t *parts[3] = {(const uint8_t *)text[2 * i], &separator, (const uint8_t *)text[2 * i + 1]};
        size_t lengths[3] = {strlen(text[2 * i]), 1, strlen(text[2 * i + 1])};
        if (!chunk(&b, "tEXt", parts, lengths, 3)) goto oom;
    }

    // IDAT: its length patched in once the stream is written.
    if (!reserve(&b, 8)) goto oom;
    size_t idat = b.length;
    memcpy(b.data + idat + 4, "IDAT", 4);
    b.length += 8;
    struct isal_zstream *s = &d->stream;
    isal_deflate_init(s);
    s->level = 1;
    s->level_buf = d->level_buffer;
    s->level_buf_size = sizeof d->level_buffer;
    s->gzip_flag = IGZIP_ZLIB;
    s->flush = NO_FLUSH;
    size_t in_block = 0;
    for (uint32_t y = 0; y < height; y++) {
        // Up: each byte less the one above it, straight from the RGBA rows (dropping the 4th byte
        // of opaque pixels); the first row as it is (None).
        const uint8_t *source = pixels + (size_t)y * stride;
        uint8_t *filtered = block + in_block * filtered_row;
        filtered[0] = y == 0 ? 0 : 2;
        if (has_alpha) up_rgba(filtered + 1, source, y == 0 ? NULL : source - stride, row_bytes);
        else up_rgb(filtered + 1, source, y == 0 ? NULL : source - stride, width);
        in_block++;
        if (in_block == rows_per_block || y + 1 == height) {
            if (!deflate_into(&b, s, block, in_block * filtered_row, y + 1 == height)) goto oom;
            in_block = 0;
        }
    }
    size_t stream_length = b.length - idat - 8;
    if (stream_length > 0x7fffffff || !reserve(&b, 4)) goto oom;
    put32(b.data + idat, (uint32_t)stream_length);
    put32(b.data + b.length, (uint32_t)crc32(0, b.data + idat + 4, (uInt)(stream_length + 4)));
    b.length += 4;
    if (!chunk(&b, "IEND", NULL, NULL, 0)) goto oom;
    free(rows);
    *out = b.data;
    *out_length = b.length;
    return CPNG_OK;
oom:
    free(rows);
    free(b.data);
    snprintf(message, message_size, "out of memory writing a %ux%u PNG", width, height);
    return CPNG_ERROR;
}
