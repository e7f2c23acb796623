#include <errno.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>
#include <string.h>

#include "cpng_read.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define CHUNK(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define TYPE_IHDR CHUNK('I', 'H', 'D', 'R')
#define TYPE_PLTE CHUNK('P', 'L', 'T', 'E')
#define TYPE_IDAT CHUNK('I', 'D', 'A', 'T')
#define TYPE_TRNS CHUNK('t', 'R', 'N', 'S')
#define TYPE_EXIF CHUNK('e', 'X', 'I', 'f')

// Reads of the file, and inflated rows per batch: each fits the L2 cache, where the rows are
// unfiltered and converted before the next batch overwrites them.
#define INPUT_SIZE ((size_t)128 << 10)
#define BATCH_BYTES ((size_t)128 << 10)
// As libpng's allocation cap in cpng.c: no row buffer and no eXIf copy beyond it.
#define MAX_ALLOCATION ((size_t)64 << 20)

struct cpng_reader {
    FILE *file;
    uint32_t width, height;
    int depth, color, interlaced;
    size_t bpp;                 // bytes per pixel as stored (at least 1)
    size_t row_bytes;           // a row as stored, without its filter byte
    uint8_t palette[256][4];    // RGBA; entries past PLTE black and opaque, as libpng makes them
    int has_key;                // a tRNS colour key for gray or RGB
    uint16_t key[3];
    uint8_t *exif;
    size_t exif_length;

    // The zlib stream, read from IDAT chunks in turn with each chunk's CRC checked.
    struct inflate_state *inflate;
    uint8_t *input;
    size_t in_pos, in_len;
    uint32_t idat_left, crc;
    size_t zlib_header_left;

    // Row slots of row_bytes + 1 (the filter byte first): slot 0 keeps the row above the batch.
    uint8_t *slots;
    size_t batch, ready, next;
    uint32_t inflated, delivered;
};

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static uint32_t chunk_crc(const uint8_t type[4], const uint8_t *data, size_t length) {
    return crc32_gzip_refl(crc32_gzip_refl(0, type, 4), data, length);
}

static int read_exact(FILE *file, void *out, size_t count) { return fread(out, 1, count, file) == count; }

static int is_letter(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// PLTE, tRNS or eXIf: read whole with its CRC; 0 when anything about it is not as libpng would
// take it without a warning (libpng then reads the file, and decides).
static int read_small_chunk(cpng_reader *r, const uint8_t head[8], uint32_t length, int *seen_palette, int *palette_count,
                            int *seen_trns) {
    uint32_t type = be32(head + 4);
    size_t cap = type == TYPE_PLTE ? 768 : type == TYPE_TRNS ? 256 : MAX_ALLOCATION;
    if (length > cap) return 0;
    uint8_t *data = malloc((size_t)length + 4);
    if (!data) return 0;
    int ok = read_exact(r->file, data, (size_t)length + 4) && chunk_crc(head + 4, data, length) == be32(data + length);
    if (ok && type == TYPE_PLTE) {
        // A suggested palette in an RGB image is allowed and unused; gray images may not have one.
        ok = !*seen_palette && !*seen_trns && length > 0 && length % 3 == 0 && (r->color == 3 || r->color == 2 || r->color == 6);
        *seen_palette = 1;
        if (ok && r->color == 3) {
            *palette_count = (int)(length / 3);
            for (int i = 0; i < *palette_count; i++) memcpy(r->palette[i], data + 3 * i, 3);
        }
    } else if (ok && type == TYPE_TRNS) {
        ok = !*seen_trns;
        *seen_trns = 1;
        if (ok && r->color == 3) {
            ok = *seen_palette && length > 0 && (int)length <= *palette_count;
            for (uint32_t i = 0; ok && i < length; i++) r->palette[i][3] = data[i];
        } else if (ok && (r->color == 0 || r->color == 2)) {
            int samples = r->color == 0 ? 1 : 3;
            ok = length == (uint32_t)samples * 2;
            for (int i = 0; ok && i < samples; i++) {
                r->key[i] = (uint16_t)(data[2 * i] << 8 | data[2 * i + 1]);
                // libpng warns about a key beyond the depth and compares its low byte: let it.
                if (r->depth == 8 && r->key[i] > 255) ok = 0;
            }
            r->has_key = ok;
        } else {
            ok = 0;  // tRNS beside an alpha channel: libpng warns and drops it
        }
    } else if (ok) {  // eXIf: libpng keeps it only if it starts with a byte-order mark
        ok = !r->exif && length >= 2 && data[0] == data[1] && (data[0] == 'M' || data[0] == 'I');
        if (ok) {
            r->exif = data;
            r->exif_length = length;
            return 1;
        }
    }
    free(data);
    return ok;
}

// Everything before the first IDAT; 1 when this reader takes the file.
static int read_header_chunks(cpng_reader *r, cpng_info *info) {
    uint8_t head[8], ihdr[17];
    if (!read_exact(r->file, head, 8) || be32(head) != 13 || be32(head + 4) != TYPE_IHDR) return 0;
    if (!read_exact(r->file, ihdr, 17) || chunk_crc(head + 4, ihdr, 13) != be32(ihdr + 13)) return 0;
    r->width = be32(ihdr);
    r->height = be32(ihdr + 4);
    r->depth = ihdr[8];
    r->color = ihdr[9];
    if (r->width == 0 || r->height == 0 || r->width > 0x7fffffffu || r->height > 0x7fffffffu) return 0;
    if (ihdr[10] != 0 || ihdr[11] != 0 || ihdr[12] > 1) return 0;
    r->interlaced = ihdr[12];
    int channels = r->color == 0 ? 1 : r->color == 2 ? 3 : r->color == 3 ? 1 : r->color == 4 ? 2 : r->color == 6 ? 4 : 0;
    if (channels == 0 || !(r->depth == 8 || (r->depth == 16 && r->color != 3))) return 0;
    r->bpp = (size_t)channels * (size_t)r->depth / 8;
    r->row_bytes = (size_t)r->width * r->bpp;
    for (int i = 0; i < 256; i++) {
        memset(r->palette[i], 0, 3);
        r->palette[i][3] = 0xff;
    }

    int seen_palette = 0, palette_count = 0, seen_trns = 0;
    for (;;) {
        if (!read_exact(r->file, head, 8)) return 0;
        uint32_t length = be32(head), type = be32(head + 4);
        if (length > 0x7fffffffu || !is_letter(head[4]) || !is_letter(head[5]) || !is_letter(head[6]) || !is_letter(head[7])) return 0;
        if (type == TYPE_IDAT) {
            if (r->color == 3 && !seen_palette) return 0;
            // The zlib header must be whole in the first chunk and plain deflate: libpng judges the rest.
            uint8_t z[2];
            if (length < 2 || !read_exact(r->file, z, 2) || fseek(r->file, -2, SEEK_CUR) != 0) return 0;
            if ((z[0] & 0x0f) != 8 || (z[0] >> 4) > 7 || (z[1] & 0x20) || ((z[0] << 8) | z[1]) % 31 != 0) return 0;
            r->idat_left = length;
            r->crc = crc32_gzip_refl(0, head + 4, 4);
            break;
        }
        if (type == TYPE_PLTE || type == TYPE_TRNS || type == TYPE_EXIF) {
            if (!read_small_chunk(r, head, length, &seen_palette, &palette_count, &seen_trns)) return 0;
        } else if (head[4] & 0x20) {
            // Other ancillary chunks do not change the pixels; libpng drops the malformed ones.
            if (fseek(r->file, (long)length + 4, SEEK_CUR) != 0) return 0;
        } else {
            return 0;  // IEND, a second IHDR, or a critical chunk nobody knows
        }
    }
    info->width = r->width;
    info->height = r->height;
    info->bit_depth = r->depth;
    info->color_type = r->color;
    info->interlaced = r->interlaced;
    info->has_alpha = (r->color & 4) || seen_trns;
    info->exif = r->exif;
    info->exif_length = r->exif_length;
    return 1;
}

cpng_reader *cpng_reader_open(FILE *file, cpng_info *info) {
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    (void)file;
    (void)info;
    return NULL;
#else
    cpng_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->file = file;
    if (!read_header_chunks(r, info)) {
        free(r->exif);
        free(r);
        // Should the seek fail, libpng reads from wherever this stopped and reports the file bad.
        (void)fseek(file, 8, SEEK_SET);
        return NULL;
    }
    return r;
#endif
}

static cpng_status fail(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
    return CPNG_ERROR;
}

cpng_status cpng_reader_start(cpng_reader *r, char *message, size_t size) {
    size_t stride = r->row_bytes + 1;
    if (stride > MAX_ALLOCATION) return fail(message, size, "row too wide to decode");
    r->batch = BATCH_BYTES / stride;
    if (r->batch < 1) r->batch = 1;
    if (r->batch > r->height) r->batch = r->height;
    // calloc: the slot above the first row reads as zeros, as the filters define it.
    r->slots = calloc(r->batch + 1, stride);
    r->input = malloc(INPUT_SIZE);
    r->inflate = malloc(sizeof *r->inflate);
    if (!r->slots || !r->input || !r->inflate) return fail(message, size, "out of memory");
    isal_inflate_init(r->inflate);
    r->inflate->crc_flag = ISAL_DEFLATE;
    // The zlib header was checked when the file was opened; inflate reads the raw deflate stream
    // after it. Adler-32 is not checked: every chunk's CRC-32 covers the same bytes (as in cpng.c).
    r->zlib_header_left = 2;
    r->in_pos = r->in_len = 0;
    return CPNG_OK;
}

static cpng_status short_read(cpng_reader *r, char *message, size_t size) {
    return fail(message, size, ferror(r->file) ? strerror(errno) : "unexpected end of file (truncated)");
}

// Reads the next block of the file when the input buffer is used up; 0 at the end of the file.
static int refill(cpng_reader *r) {
    if (r->in_pos < r->in_len) return 1;
    r->in_pos = 0;
    r->in_len = fread(r->input, 1, INPUT_SIZE, r->file);
    return r->in_len > 0;
}

// `count` bytes from the file through the input buffer.
static int take(cpng_reader *r, uint8_t *out, size_t count) {
    while (count > 0) {
        if (!refill(r)) return 0;
        size_t n = r->in_len - r->in_pos < count ? r->in_len - r->in_pos : count;
        memcpy(out, r->input + r->in_pos, n);
        r->in_pos += n;
        out += n;
        count -= n;
    }
    return 1;
}

// The next stretch of the current IDAT chunk's data in the input buffer, taken and added to the
// chunk's CRC; NULL at the end of the file.
static const uint8_t *chunk_data(cpng_reader *r, size_t *count) {
    if (!refill(r)) return NULL;
    size_t n = r->in_len - r->in_pos < r->idat_left ? r->in_len - r->in_pos : r->idat_left;
    const uint8_t *data = r->input + r->in_pos;
    r->crc = crc32_gzip_refl(r->crc, data, n);
    r->in_pos += n;
    r->idat_left -= (uint32_t)n;
    *count = n;
    return data;
}

// Hands inflate the next piece of the zlib stream: the rest of this IDAT chunk that is in the
// input buffer, or the start of the next IDAT once this one's CRC is checked.
static cpng_status next_input(cpng_reader *r, char *message, size_t size) {
    while (r->idat_left == 0) {
        uint8_t tail[12];  // this chunk's CRC, the next one's length and type
        if (!take(r, tail, 12)) return short_read(r, message, size);
        if (be32(tail) != r->crc) return fail(message, size, "IDAT: CRC error");
        if (be32(tail + 8) != TYPE_IDAT) return fail(message, size, "Not enough image data");
        r->idat_left = be32(tail + 4);
        if (r->idat_left > 0x7fffffffu) return fail(message, size, "IDAT: chunk length out of range");
        r->crc = crc32_gzip_refl(0, tail + 8, 4);
    }
    size_t n;
    const uint8_t *data = chunk_data(r, &n);
    if (!data) return short_read(r, message, size);
    size_t skip = r->zlib_header_left < n ? r->zlib_header_left : n;  // the zlib header, checked at open
    r->zlib_header_left -= skip;
    r->inflate->next_in = (uint8_t *)data + skip;
    r->inflate->avail_in = (uint32_t)(n - skip);
    return CPNG_OK;
}

static cpng_status inflate_rows(cpng_reader *r, uint8_t *out, size_t want, char *message, size_t size) {
    struct inflate_state *z = r->inflate;
    size_t have = 0;
    while (have < want) {
        // Once the stream's input is done, inflate may still hold output for a small request.
        if (z->avail_in == 0 && z->block_state != ISAL_BLOCK_INPUT_DONE && z->block_state != ISAL_BLOCK_FINISH) {
            cpng_status status = next_input(r, message, size);
            if (status != CPNG_OK) return status;
        }
        size_t chunk = want - have > 0x7fffffffu ? 0x7fffffffu : want - have;
        z->next_out = out + have;
        z->avail_out = (uint32_t)chunk;
        uint32_t in_before = z->avail_in;
        int ret = isal_inflate(z);
        if (ret < 0) {
            return fail(message, size, ret == ISAL_INVALID_LOOKBACK ? "IDAT: invalid distance too far back"
                                       : ret == ISAL_INVALID_SYMBOL ? "IDAT: invalid code in compressed data"
                                                                    : "IDAT: invalid compressed data");
        }
        size_t produced = chunk - z->avail_out;
        if (produced == 0 && z->avail_in == in_before) {  // nothing moved: never loop on it
            int ended = z->block_state == ISAL_BLOCK_INPUT_DONE || z->block_state == ISAL_BLOCK_FINISH;
            return fail(message, size, ended ? "Not enough image data" : "IDAT: inflate made no progress");
        }
        have += produced;
    }
    return CPNG_OK;
}

// After the last row: the rest of the IDAT chunk it came from, and that chunk's CRC, as libpng
// checks them, so that a file cut in its last chunk is an error here too.
static cpng_status finish_chunk(cpng_reader *r, char *message, size_t size) {
    size_t n;
    while (r->idat_left > 0) {
        if (!chunk_data(r, &n)) return short_read(r, message, size);
    }
    uint8_t crc[4];
    if (!take(r, crc, 4)) return short_read(r, message, size);
    return be32(crc) == r->crc ? CPNG_OK : fail(message, size, "IDAT: CRC error");
}

// Paeth's predictor without branches: which neighbour wins is data, and mispredicted branches
// cost more than the chain from one byte to the next.
static inline int paeth(int a, int b, int c) {
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    int b_or_c = pb <= pc ? b : c;
    return ((pa <= pb) & (pa <= pc)) ? a : b_or_c;
}

// The four filters undone in place, byte by byte, for any pixel size (PNG's rules, section 9).
static void unfilter_bytes(int filter, uint8_t *row, const uint8_t *above, size_t n, size_t bpp) {
    size_t i = 0;
    switch (filter) {
    case 1:
        for (i = bpp; i < n; i++) row[i] = (uint8_t)(row[i] + row[i - bpp]);
        break;
    case 2:
        for (; i < n; i++) row[i] = (uint8_t)(row[i] + above[i]);
        break;
    case 3:
        for (; i < bpp; i++) row[i] = (uint8_t)(row[i] + (above[i] >> 1));
        for (; i < n; i++) row[i] = (uint8_t)(row[i] + ((row[i - bpp] + above[i]) >> 1));
        break;
    case 4:
        for (; i < bpp; i++) row[i] = (uint8_t)(row[i] + above[i]);
        if (bpp == 1) {
            // Gray: the byte to the left stays in a register, not reloaded from the store just made.
            for (int a = row[0], c = above[0]; i < n; i++) {
                int b = above[i];
                a = (uint8_t)(row[i] + paeth(a, b, c));
                row[i] = (uint8_t)a;
                c = b;
            }
            break;
        }
        if (bpp == 2) {
            // Gray with alpha, 16-bit gray: the same, two chains side by side.
            for (int a0 = row[0], a1 = row[1], c0 = above[0], c1 = above[1]; i < n; i += 2) {
                int b0 = above[i], b1 = above[i + 1];
                a0 = (uint8_t)(row[i] + paeth(a0, b0, c0));
                a1 = (uint8_t)(row[i + 1] + paeth(a1, b1, c1));
                row[i] = (uint8_t)a0;
                row[i + 1] = (uint8_t)a1;
                c0 = b0;
                c1 = b1;
            }
            break;
        }
        for (; i < n; i++) row[i] = (uint8_t)(row[i] + paeth(row[i - bpp], above[i], above[i - bpp]));
        break;
    }
}

#if defined(__x86_64__)
#define UNFILTER_TARGET __attribute__((target("avx2")))
#define UNFILTER(name) name##_avx2
#include "cpng_unfilter.h"
#undef UNFILTER_TARGET
#undef UNFILTER
#define UNFILTER_TARGET __attribute__((target("sse4.1")))
#define UNFILTER(name) name##_sse41
#include "cpng_unfilter.h"
#undef UNFILTER_TARGET
#undef UNFILTER

__attribute__((target("ssse3"))) static void rgb_to_rgba_ssse3(const uint8_t *src, uint8_t *dst, size_t width) {
    const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m128i opaque = _mm_set1_epi32((int)0xff000000u);
    size_t x = 0;
    // Four pixels from a 16-byte load of which 12 are used: stop where the load would pass the row.
    for (; x + 6 <= width; x += 4) {
        __m128i in = _mm_loadu_si128((const __m128i *)(src + 3 * x));
        _mm_storeu_si128((__m128i *)(dst + 4 * x), _mm_or_si128(_mm_shuffle_epi8(in, spread), opaque));
    }
    for (; x < width; x++) {
        dst[4 * x] = src[3 * x];
        dst[4 * x + 1] = src[3 * x + 1];
        dst[4 * x + 2] = src[3 * x + 2];
        dst[4 * x + 3] = 0xff;
    }
}
#endif

// __builtin_cpu_supports reads what the C runtime found at start-up: cheap enough to ask each time.
#if defined(__x86_64__)
#define HAVE_SSSE3 __builtin_cpu_supports("ssse3")
#define HAVE_SSE41 __builtin_cpu_supports("sse4.1")
#define HAVE_AVX2 __builtin_cpu_supports("avx2")
#endif

static void unfilter(int filter, uint8_t *row, const uint8_t *above, size_t n, size_t bpp) {
#if defined(__x86_64__)
    if (filter != 0 && filter != 2 && bpp >= 3 && HAVE_AVX2) {
        unfilter_vector_avx2(filter, row, above, n, bpp);
        return;
    }
    if (filter != 0 && filter != 2 && bpp >= 3 && HAVE_SSE41) {
        unfilter_vector_sse41(filter, row, above, n, bpp);
        return;
    }
#endif
    unfilter_bytes(filter, row, above, n, bpp);
}

// libpng's png_set_scale_16: the nearest 8-bit value, exactly.
static inline uint8_t scale16(const uint8_t *p) { return (uint8_t)(((uint32_t)(p[0] << 8 | p[1]) * 255 + 32895) >> 16); }

static inline uint16_t sample16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static inline void store(uint8_t *out, size_t x, uint32_t pixel) { memcpy(out + 4 * x, &pixel, 4); }

static inline uint32_t pack(uint32_t red, uint32_t green, uint32_t blue, uint32_t alpha) {
    return red | green << 8 | blue << 16 | alpha << 24;  // RGBA in memory: the reader runs on little-endian only
}

// One loop per layout, so that each is a straight run the compiler can vectorize.
static void to_rgba(const cpng_reader *r, const uint8_t *src, uint8_t *out, size_t width) {
    int key = r->has_key;
    if (r->depth == 8) {
        switch (r->color) {
        case 6:
            memcpy(out, src, width * 4);
            return;
        case 2:
#if defined(__x86_64__)
            if (!key && HAVE_SSSE3) {
                rgb_to_rgba_ssse3(src, out, width);
                return;
            }
#endif
            for (size_t x = 0; x < width; x++, src += 3) {
                int clear = key && src[0] == r->key[0] && src[1] == r->key[1] && src[2] == r->key[2];
                store(out, x, pack(src[0], src[1], src[2], clear ? 0 : 0xff));
            }
            return;
        case 0:
            if (key) {
                for (size_t x = 0; x < width; x++) store(out, x, src[x] * 0x010101u | (src[x] == r->key[0] ? 0 : 0xff000000u));
            } else {
                for (size_t x = 0; x < width; x++) store(out, x, src[x] * 0x010101u | 0xff000000u);
            }
            return;
        case 4:
            for (size_t x = 0; x < width; x++) store(out, x, src[2 * x] * 0x010101u | (uint32_t)src[2 * x + 1] << 24);
            return;
        default:  // 3
            for (size_t x = 0; x < width; x++) memcpy(out + 4 * x, r->palette[src[x]], 4);
            return;
        }
    }
    // 16 bits: the colour key is compared before rounding, as libpng expands tRNS first.
    switch (r->color) {
    case 6:
        for (size_t x = 0; x < width; x++, src += 8) store(out, x, pack(scale16(src), scale16(src + 2), scale16(src + 4), scale16(src + 6)));
        return;
    case 2:
        for (size_t x = 0; x < width; x++, src += 6) {
            int clear = key && sample16(src) == r->key[0] && sample16(src + 2) == r->key[1] && sample16(src + 4) == r->key[2];
            store(out, x, pack(scale16(src), scale16(src + 2), scale16(src + 4), clear ? 0 : 0xff));
        }
        return;
    case 0:
        for (size_t x = 0; x < width; x++, src += 2) {
            int clear = key && sample16(src) == r->key[0];
            store(out, x, scale16(src) * 0x010101u | (clear ? 0 : 0xff000000u));
        }
        return;
    default:  // 4
        for (size_t x = 0; x < width; x++, src += 4) store(out, x, scale16(src) * 0x010101u | (uint32_t)scale16(src + 2) << 24);
        return;
    }
}

// Inflates the next batch of rows into slots 1…n and unfilters them there.
static cpng_status next_batch(cpng_reader *r, char *message, size_t size) {
    size_t stride = r->row_bytes + 1;
    size_t n = r->height - r->inflated < r->batch ? r->height - r->inflated : r->batch;
    uint8_t *first = r->slots + stride;
    cpng_status status = inflate_rows(r, first, n * stride, message, size);
    if (status != CPNG_OK) return status;
    for (size_t i = 0; i < n; i++) {
        uint8_t *slot = first + i * stride;
        if (slot[0] > 4) return fail(message, size, "bad adaptive filter value");
        if (slot[0] != 0) unfilter(slot[0], slot + 1, slot + 1 - stride, r->row_bytes, r->bpp);
    }
    memcpy(r->slots + 1, first + (n - 1) * stride + 1, r->row_bytes);
    r->inflated += (uint32_t)n;
    r->ready = n;
    r->next = 0;
    return r->inflated == r->height ? finish_chunk(r, message, size) : CPNG_OK;
}

cpng_status cpng_reader_row(cpng_reader *r, uint8_t *rgba, char *message, size_t size) {
    if (r->interlaced) return fail(message, size, "an interlaced image is read whole");
    if (r->delivered >= r->height) return fail(message, size, "read past the last row");
    if (r->next == r->ready) {
        cpng_status status = next_batch(r, message, size);
        if (status != CPNG_OK) return status;
    }
    to_rgba(r, r->slots + (r->next + 1) * (r->row_bytes + 1) + 1, rgba, r->width);
    r->next++;
    r->delivered++;
    return CPNG_OK;
}

// Adam7: seven passes over the image, each a small image of its own (its first row has no row
// above), inflated and unfiltered a row at a time in two slots, then spread to its pixels' places.
static cpng_status read_passes(cpng_reader *r, uint8_t **rows, char *message, size_t size) {
    static const uint8_t passes[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    size_t stride = r->row_bytes + 1;
    uint8_t *line = malloc((size_t)r->width * 4);
    if (!line) return fail(message, size, "out of memory");
    cpng_status status = CPNG_OK;
    for (int p = 0; p < 7 && status == CPNG_OK; p++) {
        size_t x0 = passes[p][0], y0 = passes[p][1], dx = passes[p][2], dy = passes[p][3];
        if (x0 >= r->width || y0 >= r->height) continue;
        size_t width = (r->width - x0 + dx - 1) / dx, height = (r->height - y0 + dy - 1) / dy, bytes = width * r->bpp;
        memset(r->slots, 0, stride);
        for (size_t j = 0; j < height && status == CPNG_OK; j++) {
            uint8_t *above = r->slots + (j % 2) * stride, *slot = r->slots + ((j + 1) % 2) * stride;
            status = inflate_rows(r, slot, bytes + 1, message, size);
            if (status == CPNG_OK && slot[0] > 4) status = fail(message, size, "bad adaptive filter value");
            if (status != CPNG_OK) break;
            if (slot[0] != 0) unfilter(slot[0], slot + 1, above + 1, bytes, r->bpp);
            to_rgba(r, slot + 1, line, width);
            uint8_t *out = rows[y0 + j * dy] + 4 * x0;
            for (size_t i = 0; i < width; i++) memcpy(out + 4 * dx * i, line + 4 * i, 4);
        }
    }
    free(line);
    return status == CPNG_OK ? finish_chunk(r, message, size) : status;
}

cpng_status cpng_reader_image(cpng_reader *r, uint8_t **rows, char *message, size_t size) {
    if (r->interlaced) return read_passes(r, rows, message, size);
    for (uint32_t y = 0; y < r->height; y++) {
        cpng_status status = cpng_reader_row(r, rows[y], message, size);
        if (status != CPNG_OK) return status;
    }
    return CPNG_OK;
}

int cpng_unfilter_disagreements(uint32_t seed) {
    uint8_t above[96], row[96], reference[96], vector[96];
    int differ = 0;
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < sizeof above; i++) {
            seed = seed * 1103515245u + 12345u;  // the C standard's example generator: enough here
            above[i] = (uint8_t)(seed >> 16);
            row[i] = (uint8_t)(seed >> 8);
        }
        size_t bpp = (size_t[]){3, 4, 6, 8}[round % 4];
        int filter = 1 + (round / 4) % 4;  // Sub, Up, Average, Paeth
        size_t n = sizeof row / bpp * bpp;
        memcpy(reference, row, n);
        unfilter_bytes(filter, reference, above, n, bpp);
#if defined(__x86_64__)
        if (HAVE_SSE41) {
            memcpy(vector, row, n);
            if (filter != 2) unfilter_vector_sse41(filter, vector, above, n, bpp);
            else unfilter_bytes(filter, vector, above, n, bpp);
            differ += memcmp(vector, reference, n) != 0;
        }
        if (HAVE_AVX2) {
            memcpy(vector, row, n);
            if (filter != 2) unfilter_vector_avx2(filter, vector, above, n, bpp);
            else unfilter_bytes(filter, vector, above, n, bpp);
            differ += memcmp(vector, reference, n) != 0;
        }
#endif
    }
    return differ;
}

void cpng_reader_close(cpng_reader *r) {
    if (!r) return;
    free(r->exif);
    free(r->slots);
    free(r->input);
    free(r->inflate);
    free(r);
}
