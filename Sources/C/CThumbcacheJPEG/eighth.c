// A JPEG at 1/8 scale without libjpeg's per-block machinery.
//
// At scale_denom = 8 libjpeg-turbo still runs its whole decoder for every block (the coefficient
// buffer cleared, a function pointer per block, every scan of a progressive file kept in a
// coefficient array of the whole image) to keep one number a block: its DC coefficient. Here the
// Huffman data is walked once, the DC coefficients are kept, and libjpeg-turbo 2.1's own
// arithmetic (jidctred.c, jdcolor.c, jdmaster.c) turns them into the same pixels. A progressive
// file needs only its DC scans: its AC scans are skipped to their next marker. Anything unusual
// makes this decoder give up and the caller decode with libjpeg, so errors read as they always
// have. A sequential 4:2:0 image's chroma is scaled by libjpeg with a 2×2 IDCT of each block (its
// luma's blocks give one pixel, a chroma block four): the walk keeps the 25 coefficients that IDCT
// reads and applies the same arithmetic, which libjpeg-turbo's SIMD gives too within the ranges
// checked here. A progressive 4:2:0 image would need its AC scans: it is left to libjpeg.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>
#include <sched.h>
#include <stdatomic.h>
#include <jpeglib.h>

#include "eighth.h"

// A progressive or multi-scan image is held whole here, 3 bytes a block: one of more blocks (48 MB,
// a 4:4:4 image of 358 MP) is left to libjpeg. A one-scan sequential image is streamed, of any size.
enum { LOOKAHEAD = 9, MAX_BLOCKS = 1 << 24 };

// MCUs across `size` pixels of an interleaved scan, whose MCU is 8 × `max_factor` pixels that way.
static uint32_t mcu_count(uint32_t size, int max_factor) { return (size + 8u * (uint32_t)max_factor - 1) / (8u * (uint32_t)max_factor); }

// Zig-zag index to natural order (a DQT segment lists its values in zig-zag order).
static const uint8_t natural_order[64] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13,
    6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31,
    39, 46, 53, 60, 61, 54, 47, 55, 62, 63};

typedef struct {
    uint8_t bits[17];
    uint8_t values[256];
    int defined;
} raw_table;

typedef struct {
    uint16_t look[1 << LOOKAHEAD];  // (length << 8) | symbol for codes up to LOOKAHEAD bits, else 0
    // An AC code and its extra bits taken in one lookup, where both fit in LOOKAHEAD bits, else
    // 0: (the coefficient << 16) | (how far the coefficient index moves << 8) | bits used. An end
    // of block moves it 64; a run of sixteen zeros (coefficient 0) 16.
    int32_t ac[1 << LOOKAHEAD];
    int32_t maxcode[18];
    int32_t valoffset[18];
    uint8_t values[256];
} huffman;

typedef struct {
    int h, v;
    int id;
    int table;          // quantization table number
    int latched;        // its quantization table copied (at its first scan, as libjpeg does)
    int16_t quant[64];  // libjpeg keeps them as `short`: values over 32767 wrap, here too
    int seen;
    uint32_t blocks_wide, blocks_high;  // the component's blocks holding image data
    uint32_t plane_wide, plane_high;    // blocks allocated: padded to whole MCUs
    int16_t *dc;        // a DC coefficient a block
    uint8_t *samples;   // the component's pixels at 1/8, made at the end from `dc`
    // 4:2:0's chroma: 2 × 2 pixels a block, made as each block is walked (`samples` is twice as
    // wide and high as the plane; `dc` goes unused).
    int square;
    int coef_bits[64];  // progressive: the successive-approximation state, as libjpeg tracks it
} component;

struct eighth {
    uint32_t width, height;  // output: ceil(image / 8)
    int count;
    int max_h, max_v;
    component c[3];
    // A one-scan sequential image is decoded a row of MCUs at a time, as its rows are asked for
    // (its planes one MCU row high): what the decoding needs between rows.
    struct stream *stream;
    int threads_used;          // 2 where the scan was decoded on two threads
    uint32_t tall;             // output rows an MCU row gives (a one-scan image's)
    struct pending *pending;   // a two-thread decode's guesses still to take
};

typedef struct {
    j_decompress_ptr cinfo;
    struct jpeg_source_mgr *src;
    const uint8_t *p;
    size_t n;
    uint64_t buffer;
    int bits;     // valid bits at the bottom of `buffer`
    int padding;  // of those, zero bits added after a marker: using one means the data ran out
    int marker;   // the marker that ended the entropy-coded data, 0 while none
    // Bytes of entropy-coded data put in `buffer` (a stuffed 0xFF 0x00 is one): with `bits`, where
    // in the data the next code starts, the same for readers that began at different bytes.
    uint64_t loaded;
    int in_memory;  // reads `p`/`n` only (no source): past them, an end-of-image marker
} reader;

static const uint8_t end_of_image[2] = {0xFF, 0xD9};

// MARK: Bytes

static int fill_source(reader *r) {
    if (r->in_memory) {
        r->p = end_of_image;
        r->n = sizeof end_of_image;
        return 1;
    }
    r->src->next_input_byte = r->p;
    r->src->bytes_in_buffer = 0;
    // Our sources insert an end-of-image marker at the end of the data (and warn: the caller
    // checks the warning), so this always returns bytes.
    (*r->src->fill_input_buffer)(r->cinfo);
    r->p = r->src->next_input_byte;
    r->n = r->src->bytes_in_buffer;
    return r->n > 0;
}

static inline int byte(reader *r, uint8_t *c) {
    if (r->n == 0 && !fill_source(r)) return 0;
    *c = *r->p++;
    r->n--;
    return 1;
}

static int read16(reader *r, int *value) {
    uint8_t a, b;
    if (!byte(r, &a) || !byte(r, &b)) return 0;
    *value = (a << 8) | b;
    return 1;
}

// libjpeg's next_marker: bytes before a marker are skipped (libjpeg warns but goes on), fill
// bytes (0xFF 0xFF) are skipped, 0xFF 0x00 is data.
static int next_marker(reader *r) {
    uint8_t c;
    for (;;) {
        if (!byte(r, &c)) return 0;
        while (c != 0xFF)
            if (!byte(r, &c)) return 0;
        do {
            if (!byte(r, &c)) return 0;
        } while (c == 0xFF);
        if (c != 0) return c;
    }
}

// MARK: Bits

// Tops the buffer up to more than 56 bits. After a marker only zero bits follow, counted.
static void fill_bits(reader *r) {
    // Whole bytes at once while the next eight hold no 0xFF (a marker or a stuffed byte).
    while (r->bits <= 48 && r->n >= 8 && !r->marker) {
        uint64_t word;
        memcpy(&word, r->p, 8);
        uint64_t inverted = ~word;
        if ((inverted - 0x0101010101010101ull) & ~inverted & 0x8080808080808080ull) break;
        int count = (63 - r->bits) >> 3;
        uint64_t bytes = __builtin_bswap64(word) >> (64 - 8 * count);
        r->buffer = (r->buffer << (8 * count)) | bytes;
        r->bits += 8 * count;
        r->loaded += (uint64_t)count;
        r->p += count;
        r->n -= (size_t)count;
    }
    while (r->bits <= 56) {
        uint8_t c;
        if (!r->marker) {
            if (r->n > 0 && *r->p != 0xFF) {
                c = *r->p++;
                r->n--;
            } else {
                if (!byte(r, &c)) c = 0;
                if (c == 0xFF) {
                    do {
                        if (!byte(r, &c)) c = 0xD9;
                    } while (c == 0xFF);
                    if (c == 0) c = 0xFF;
                    else {
                        r->marker = c;
                        continue;
                    }
                }
            }
        } else {
            c = 0;
            r->padding += 8;
            r->loaded--;  // not data
        }
        r->buffer = (r->buffer << 8) | c;
        r->bits += 8;
        r->loaded++;
    }
}

static inline unsigned peek(reader *r, int count) {
    return (unsigned)(r->buffer >> (r->bits - count)) & ((1u << count) - 1);
}

// A symbol, or -1 for a code the table lacks (libjpeg warns: corrupt data). Needs 16 bits.
static inline int decode(reader *r, const huffman *t) {
    unsigned e = t->look[peek(r, LOOKAHEAD)];
    if (e) {
        r->bits -= (int)(e >> 8);
        return (int)(e & 0xFF);
    }
    int l = LOOKAHEAD + 1;
    int32_t code = (int32_t)peek(r, l);
    while (l <= 16 && code > t->maxcode[l]) {
        l++;
        code = (int32_t)peek(r, l);
    }
    if (l > 16) return -1;
    r->bits -= l;
    return t->values[(code + t->valoffset[l]) & 0xFF];
}

static inline int extend(unsigned value, int size) {
    return value < (1u << (size - 1)) ? (int)value + (int)(~0u << size) + 1 : (int)value;
}

static inline int receive(reader *r, int size) {
    unsigned v = peek(r, size);
    r->bits -= size;
    return extend(v, size);
}

// MARK: Tables

// libjpeg's jpeg_make_d_derived_tbl, with its checks; 0 where libjpeg would stop with an error.
static int derive(const raw_table *raw, int dc, huffman *t) {
    if (!raw->defined) return 0;
    char size[257];
    uint32_t codes[257];
    int p = 0;
    for (int l = 1; l <= 16; l++) {
        int i = raw->bits[l];
        if (p + i > 256) return 0;
        while (i--) size[p++] = (char)l;
    }
    size[p] = 0;
    int count = p;
    uint32_t code = 0;
    int si = size[0];
    p = 0;
    while (size[p]) {
        while (size[p] == si) codes[p++] = code++;
        if (code >= (1u << si)) return 0;
        code <<= 1;
        si++;
    }
    p = 0;
    for (int l = 1; l <= 16; l++) {
        if (raw->bits[l]) {
            t->valoffset[l] = p - (int32_t)codes[p];
            p += raw->bits[l];
            t->maxcode[l] = (int32_t)codes[p - 1];
        } else {
            t->maxcode[l] = -1;
        }
    }
    t->valoffset[17] = 0;
    t->maxcode[17] = 0xFFFFF;
    memset(t->look, 0, sizeof t->look);
    p = 0;
    for (int l = 1; l <= LOOKAHEAD; l++) {
        for (int i = 1; i <= raw->bits[l]; i++, p++) {
            uint32_t first = codes[p] << (LOOKAHEAD - l);
            for (uint32_t k = 0; k < (1u << (LOOKAHEAD - l)); k++)
                t->look[first + k] = (uint16_t)((l << 8) | raw->values[p]);
        }
    }
    memcpy(t->values, raw->values, sizeof t->values);
    for (unsigned i = 0; i < (1u << LOOKAHEAD); i++) {
        unsigned e = t->look[i];
        int length = (int)(e >> 8), rs = (int)(e & 0xFF), run = rs >> 4, size = rs & 15;
        t->ac[i] = 0;
        if (!e || length + size > LOOKAHEAD) continue;
        if (size == 0) {
            t->ac[i] = ((run == 15 ? 16 : 64) << 8) | length;
            continue;
        }
        unsigned extra = (i >> (LOOKAHEAD - length - size)) & ((1u << size) - 1);
        t->ac[i] = (int32_t)((uint32_t)extend(extra, size) << 16) | ((run + 1) << 8) | (length + size);
    }
    if (dc)
        for (int i = 0; i < count; i++)
            if (raw->values[i] > 15) return 0;
    return 1;
}

typedef struct {
    raw_table dc[4], ac[4];
    uint16_t quant[4][64];  // natural order
    int quant_defined[4];
    int restart_interval;
} tables;

static void copy_raw(const JHUFF_TBL *from, raw_table *to) {
    to->defined = from != NULL;
    if (!from) return;
    memcpy(to->bits, from->bits, sizeof to->bits);
    memcpy(to->values, from->huffval, sizeof to->values);
}

static int read_dht(reader *r, tables *t) {
    int length;
    if (!read16(r, &length)) return 0;
    length -= 2;
    while (length > 16) {
        uint8_t index, b;
        if (!byte(r, &index)) return 0;
        raw_table table = {.defined = 1};
        int count = 0;
        for (int i = 1; i <= 16; i++) {
            if (!byte(r, &b)) return 0;
            table.bits[i] = b;
            count += b;
        }
        length -= 17;
        if (count > 256 || count > length) return 0;
        for (int i = 0; i < count; i++)
            if (!byte(r, &table.values[i])) return 0;
        length -= count;
        if (index & 0x10) {
            if ((index & 0x0F) > 3 || (index & 0xE0)) return 0;
            t->ac[index & 0x0F] = table;
        } else {
            if (index > 3) return 0;
            t->dc[index] = table;
        }
    }
    return length == 0;
}

static int read_dqt(reader *r, tables *t) {
    int length;
    if (!read16(r, &length)) return 0;
    length -= 2;
    while (length > 0) {
        uint8_t n;
        if (!byte(r, &n)) return 0;
        int precision = n >> 4, index = n & 0x0F;
        if (index > 3 || precision > 1 || length < 1 + 64 * (precision + 1)) return 0;
        for (int i = 0; i < 64; i++) {
            int value;
            if (precision) {
                if (!read16(r, &value)) return 0;
            } else {
                uint8_t b;
                if (!byte(r, &b)) return 0;
                value = b;
            }
            t->quant[index][natural_order[i]] = (uint16_t)value;
        }
        t->quant_defined[index] = 1;
        length -= 1 + 64 * (precision + 1);
    }
    return length == 0;
}

static int read_dri(reader *r, tables *t) {
    int length, interval;
    if (!read16(r, &length) || length != 4 || !read16(r, &interval)) return 0;
    t->restart_interval = interval;
    return 1;
}

static int skip_segment(reader *r) {
    int length;
    if (!read16(r, &length) || length < 2) return 0;
    for (int i = 2; i < length; i++) {
        uint8_t b;
        if (!byte(r, &b)) return 0;
    }
    return 1;
}

// MARK: Scans

typedef struct {
    int count;
    int index[4];  // into eighth.c
    int dc_table[4], ac_table[4];
    int ss, se, ah, al;
} scan;

static int read_sos(reader *r, const eighth *e, scan *s) {
    int length;
    uint8_t n, b;
    if (!read16(r, &length) || !byte(r, &n)) return 0;
    if (n < 1 || n > 4 || length != n * 2 + 6) return 0;
    s->count = n;
    for (int i = 0; i < n; i++) {
        uint8_t id;
        if (!byte(r, &id) || !byte(r, &b)) return 0;
        int found = -1;
        for (int ci = 0; ci < e->count; ci++)
            if (e->c[ci].id == id) found = ci;
        if (found < 0) return 0;
        for (int j = 0; j < i; j++)
            if (s->index[j] == found) return 0;  // libjpeg renames a repeated id; not handled here
        s->index[i] = found;
        s->dc_table[i] = b >> 4;
        s->ac_table[i] = b & 0x0F;
    }
    uint8_t ss, se, a;
    if (!byte(r, &ss) || !byte(r, &se) || !byte(r, &a)) return 0;
    s->ss = ss;
    s->se = se;
    s->ah = a >> 4;
    s->al = a & 0x0F;
    return 1;
}

// The post-IDCT range limit of jdmaster.c (prepare_range_limit_table), indexed by value & 1023.
static uint8_t idct_limit[1024];

static void make_limits(void) {
    for (int i = 0; i < 1024; i++)
        idct_limit[i] = (uint8_t)(i < 128 ? i + 128 : i < 512 ? 255 : i < 896 ? 0 : i - 896);
}

static void make_color(void);

static void make_tables(void) {
    make_limits();
    make_color();
}

typedef struct {
    reader *r;
    eighth *e;
    const scan *s;
    huffman dc[4], ac[4];
    int predictor[4];
    int padded;  // the data ran out: libjpeg would warn
    int to_go, next_restart;  // MCUs to the next restart marker, and its number
    uint32_t row_base;        // the MCU row the planes' first block row holds
    // A sequential scan on two threads (below): the guesser, the guess looked at, and where the
    // guesses are taken from.
    struct guess *guess;
    uint32_t guess_cursor[8];  // in each run (MAX_RUNS)
    int guess_run;
    uint32_t guess_index;
    uint64_t guess_watch;      // bits of data before the earliest run: no block before it is looked up
    uint64_t from_mcu;
    int from_phase;
} scan_state;

// libjpeg's process_restart: the rest of the byte dropped, the next marker must be the expected RSTn.
static int restart(scan_state *st, int *next) {
    reader *r = st->r;
    if (r->padding > r->bits) st->padded = 1;
    int m = r->marker ? r->marker : next_marker(r);
    if (m != 0xD0 + *next) return 0;
    *next = (*next + 1) & 7;
    r->marker = 0;
    r->bits = 0;
    r->buffer = 0;
    r->padding = 0;
    for (int k = 0; k < 4; k++) st->predictor[k] = 0;
    return 1;
}

// The bit buffer in locals while a scan is decoded (written back around the rare calls that need
// the reader), so that the compiler keeps it in registers.
#define LOAD_BITS() (buffer = r->buffer, bits = r->bits)
#define SAVE_BITS() (r->buffer = buffer, r->bits = bits)
#define FILL_BITS()                                                                                                    \
    do {                                                                                                               \
        if (bits < 32) {                                                                                               \
            SAVE_BITS();                                                                                               \
            fill_bits(r);                                                                                              \
            LOAD_BITS();                                                                                               \
        }                                                                                                              \
    } while (0)
#define PEEK(count) ((unsigned)(buffer >> (bits - (count))) & ((1u << (count)) - 1))
// A symbol into `out`, or a return of 0 for a code the table lacks.
#define DECODE(out, table)                                                                                             \
    do {                                                                                                               \
        unsigned look_ = (table)->look[PEEK(LOOKAHEAD)];                                                               \
        if (look_) {                                                                                                   \
            bits -= (int)(look_ >> 8);                                                                                 \
            out = (int)(look_ & 0xFF);                                                                                 \
        } else {                                                                                                       \
            SAVE_BITS();                                                                                               \
            out = decode(r, (table));                                                                                  \
            LOAD_BITS();                                                                                               \
            if (out < 0) return 0;                                                                                     \
        }                                                                                                              \
    } while (0)

// jidctred.c's 2×2 IDCT of a 4:2:0 chroma block (rows and columns 0, 1, 3, 5 and 7 of its
// coefficients, dequantized), in two steps: its sums that do not involve the DC coefficient, which a
// block decoded before its DC predictor is known can have (the split decode), then its pixels. Its
// column 0 gives 4 × DC × quant + `top` (`bottom`) exactly, since DC × quant × 2¹⁵ is a multiple of
// the 2¹³ that column is divided by; `odd` are its rows' sums of columns 1, 3, 5 and 7.
typedef struct {
    int32_t top, bottom;
    int32_t odd[2];
} square_part;

enum { C7 = -5906, C5 = 6967, C3 = -10426, C1 = 29692 };  // FIX(x) of sqrt(2) × sums of cosines, 13 bits

// Each step returns 0 where a value leaves the range in which libjpeg-turbo's SIMD version (16-bit
// lanes, saturating) and its C version (which wraps in the range limit) agree: the caller then
// leaves the image to libjpeg.
#define OUTSIDE16(v) ((uint64_t)((int64_t)(v) + 32768) > 65535u)
#define OUTSIDE30(v) ((uint64_t)((int64_t)(v) + (1 << 30)) > (uint64_t)1 << 31)

static int square_part_of(const int16_t *coef, const int16_t *quant, square_part *part) {
    int32_t top[8], bottom[8];
    unsigned outside = 0;
    for (int col = 0; col < 8; col += col ? 2 : 1) {  // 0, 1, 3, 5, 7
        int32_t z0 = col ? (int32_t)coef[col] * quant[col] : 0, z1 = (int32_t)coef[8 + col] * quant[8 + col];
        int32_t z3 = (int32_t)coef[24 + col] * quant[24 + col], z5 = (int32_t)coef[40 + col] * quant[40 + col];
        int32_t z7 = (int32_t)coef[56 + col] * quant[56 + col];
        outside |= OUTSIDE16(z0) | OUTSIDE16(z1) | OUTSIDE16(z3) | OUTSIDE16(z5) | OUTSIDE16(z7);
        if ((z1 | z3 | z5 | z7) == 0) {
            top[col] = bottom[col] = z0 * 4;  // what the sums below give then
            continue;
        }
        int64_t even = (int64_t)z0 * 32768, odd = (int64_t)z7 * C7 + (int64_t)z5 * C5 + (int64_t)z3 * C3 + (int64_t)z1 * C1;
        int64_t a = (even + odd + (1 << 12)) >> 13, b = (even - odd + (1 << 12)) >> 13;
        outside |= OUTSIDE30(odd) | OUTSIDE16(a) | OUTSIDE16(b);
        top[col] = (int32_t)a;
        bottom[col] = (int32_t)b;
    }
    const int32_t *rows[2] = {top, bottom};
    for (int i = 0; i < 2; i++) {
        const int32_t *w = rows[i];
        int64_t odd = (int64_t)w[7] * C7 + (int64_t)w[5] * C5 + (int64_t)w[3] * C3 + (int64_t)w[1] * C1;
        outside |= OUTSIDE30(odd);
        part->odd[i] = (int32_t)odd;
    }
    part->top = top[0];
    part->bottom = bottom[0];
    return !outside;
}

// The block's four pixels into `out` (two rows, `stride` apart), from its DC coefficient.
static int square_finish(int16_t dc, int16_t quant, const square_part *part, uint8_t *out, size_t stride) {
    int32_t z0 = (int32_t)dc * quant;
    unsigned outside = OUTSIDE16(z0);
    for (int i = 0; i < 2; i++) {
        int32_t w0 = z0 * 4 + (i ? part->bottom : part->top);
        int64_t even = (int64_t)w0 * 32768;
        int64_t left = (even + part->odd[i] + (1 << 19)) >> 20, right = (even - part->odd[i] + (1 << 19)) >> 20;
        outside |= OUTSIDE16(w0) | ((uint64_t)(left + 512) > 1023u) | ((uint64_t)(right + 512) > 1023u);
        out[(size_t)i * stride] = idct_limit[left & 1023];
        out[(size_t)i * stride + 1] = idct_limit[right & 1023];
    }
    return !outside;
}
#undef OUTSIDE16
#undef OUTSIDE30

// Where each block of an MCU goes, worked out once a scan.
typedef struct {
    component *c;
    const huffman *dc, *ac;
    int k;          // the component's place in the scan (its DC predictor)
    uint32_t x, y;  // the block's offset within the MCU, in blocks
} mcu_block;

static int mcu_layout(const scan_state *st, mcu_block blocks[10]) {
    const scan *s = st->s;
    int count = 0;
    for (int k = 0; k < s->count; k++) {
        component *c = &st->e->c[s->index[k]];
        int h = s->count == 1 ? 1 : c->h, v = s->count == 1 ? 1 : c->v;
        for (int y = 0; y < v; y++)
            for (int x = 0; x < h; x++)
                blocks[count++] = (mcu_block){c, &st->dc[s->dc_table[k]], &st->ac[s->ac_table[k]], k, (uint32_t)x, (uint32_t)y};
    }
    return count;
}

// A block's DC difference into `diff` (the bit buffer in locals, as in decode_sequential).
#define WALK_DC(diff, table)                                                                                           \
    do {                                                                                                               \
        FILL_BITS();                                                                                                   \
        int sym_;                                                                                                      \
        DECODE(sym_, table);                                                                                           \
        diff = 0;                                                                                                      \
        if (sym_) {                                                                                                    \
            diff = extend(PEEK(sym_), sym_);                                                                           \
            bits -= sym_;                                                                                              \
        }                                                                                                              \
    } while (0)

// A block's AC codes walked to its end; with `coef`, its coefficients kept where libjpeg puts them
// (past the 64th: the last), `kept` set where there is one.
#define WALK_AC(table, coef, kept)                                                                                     \
    do {                                                                                                               \
        const huffman *act_ = (table);                                                                                 \
        for (int i = 1; i < 64;) {                                                                                     \
            FILL_BITS();                                                                                               \
            int32_t fast = act_->ac[PEEK(LOOKAHEAD)];                                                                  \
            if (fast) {                                                                                                \
                bits -= fast & 0xFF;                                                                                   \
                i += (fast >> 8) & 0xFF;                                                                               \
                if ((coef) && (fast >> 16)) {                                                                          \
                    (coef)[i > 64 ? 63 : natural_order[i - 1]] = (int16_t)(fast >> 16);                                \
                    kept = 1;                                                                                          \
                }                                                                                                      \
                continue;                                                                                              \
            }                                                                                                          \
            int rs;                                                                                                    \
            DECODE(rs, act_);                                                                                          \
            int run = rs >> 4, size = rs & 15;                                                                         \
            if (size) {                                                                                                \
                i += run;                                                                                              \
                if (coef) {                                                                                            \
                    (coef)[i > 63 ? 63 : natural_order[i]] = (int16_t)extend(PEEK(size), size);                        \
                    kept = 1;                                                                                          \
                }                                                                                                      \
                bits -= size;                                                                                          \
                i++;                                                                                                   \
            } else {                                                                                                   \
                if (run != 15) break;                                                                                  \
                i += 16;                                                                                               \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

static int in_step(scan_state *st, uint64_t at, int phase);
static void watch_guesses(scan_state *st, const reader *r);

// A sequential scan: each block's DC kept, its AC codes walked to find the block's end. With a
// guessing thread (st->guess), returns 2 where its blocks are found to be this scan's from the
// block at st->from_mcu and st->from_phase on: the caller takes them from there.
static int decode_sequential(scan_state *st, uint32_t mcus_wide, uint32_t from, uint32_t to, int restart_interval) {
    reader *r = st->r;
    const scan *s = st->s;
    mcu_block blocks[10];
    int count = mcu_layout(st, blocks);
    uint64_t buffer;
    int bits;
    LOAD_BITS();
    for (uint32_t my = from; my < to; my++) {
        if (st->guess) watch_guesses(st, r);
        for (uint32_t mx = 0; mx < mcus_wide; mx++) {
            if (restart_interval) {
                if (st->to_go == 0) {
                    SAVE_BITS();
                    if (!restart(st, &st->next_restart)) return 0;
                    LOAD_BITS();
                    st->to_go = restart_interval;
                }
                st->to_go--;
            }
            for (int b = 0; b < count; b++) {
                const mcu_block *m = &blocks[b];
                component *c = m->c;
                if (st->guess && r->loaded * 8 - (uint64_t)bits >= st->guess_watch && in_step(st, r->loaded * 8 - (uint64_t)bits, b)) {
                    SAVE_BITS();
                    st->from_mcu = (uint64_t)my * mcus_wide + mx;
                    st->from_phase = b;
                    return 2;
                }
                uint32_t bx = mx * (uint32_t)(s->count == 1 ? 1 : c->h) + m->x;
                uint32_t by = (my - st->row_base) * (uint32_t)(s->count == 1 ? 1 : c->v) + m->y;
                int diff;
                WALK_DC(diff, m->dc);
                unsigned sum = (unsigned)st->predictor[m->k] + (unsigned)diff;  // libjpeg lets it wrap
                st->predictor[m->k] = (int)sum;
                if (c->square) {
                    int16_t values[64] = {0}, *coef = values;
                    int any = 0;
                    WALK_AC(m->ac, coef, any);
                    size_t stride = 2 * (size_t)c->plane_wide;
                    square_part part = {0, 0, {0, 0}};  // a block of its DC alone
                    if ((any && !square_part_of(coef, c->quant, &part)) ||
                        !square_finish((int16_t)sum, c->quant[0], &part, c->samples + 2 * (size_t)by * stride + 2 * (size_t)bx, stride))
                        return 0;
                    continue;
                }
                c->dc[(size_t)by * c->plane_wide + bx] = (int16_t)sum;
                int16_t *none = NULL;
                int any = 0;
                WALK_AC(m->ac, none, any);
                (void)any;
            }
            if (r->padding > bits) return 0;  // libjpeg would have warned that the data ran out
        }
    }
    SAVE_BITS();
    return 1;
}

// MARK: A sequential scan on two threads
//
// Huffman codes carry no positions, so a scan cannot be cut in two and each half decoded on its
// own; but a decoder started at an arbitrary bit soon falls into step with the real code
// boundaries (JPEG's codes resynchronize within a few blocks). The second thread guesses: it
// decodes from the middle of the data, as though an MCU began there, and records where each block
// it finds begins, its place in an MCU and its DC difference. The first thread decodes from the
// start; once past the middle, a block of its that begins at a bit where a guessed block begins,
// at the same place in an MCU, is the same block, and so is every block after it (the same
// state decodes the same way). From there the guesses are taken, their DC differences summed on
// from the first thread's predictors. Where the guesser never falls into step, the first thread
// decodes it all, as it would alone: the pixels never depend on the guess.
//
// Bytes are not blocks (a sky is cheaper than a meadow), so the guesser may finish first: it then
// guesses again, from halfway between where the first thread has read to and where its last run
// began, until that run falls into step with the one after it in the data. The first thread takes
// the runs in the data's order, each from where it meets the next.

// Data of less is decoded on one thread (a thread's start is not worth it); an image of more
// blocks is streamed as it would be on one, whose memory does not grow with it. A run that has
// decoded this many blocks past the next one's start without falling into step with it ends.
enum { SPLIT_MIN_BYTES = 1 << 17, SPLIT_MAX_BYTES = 1 << 28, SPLIT_MAX_BLOCKS = 1 << 21, MAX_RUNS = 8, RUN_SLACK = 1 << 12 };

typedef struct {
    uint32_t at;     // where the block begins: bits of data from its run's first byte
    int16_t diff;    // its DC difference
    uint8_t phase;   // its place in an MCU, counted from where its run began (or began again)
    uint8_t flags;   // GUESS_PADDED: it used bits past the data; GUESS_AGAIN: its run began again here
    uint32_t part;   // a 4:2:0 chroma block's: its sums' place in `parts`
} guessed_block;

enum { GUESS_PADDED = 1, GUESS_AGAIN = 2 };
enum { RUN_GOING = 0, RUN_JOINED = 1, RUN_GAVE_UP = 2 };

typedef struct {
    const uint8_t *start;       // its first byte
    uint64_t base;              // bits of data before it
    uint32_t first;             // its first record in `found`
    _Atomic uint32_t published; // its records so far
    _Atomic int state;          // RUN_JOINED: in step with the run after it (run 0: at the data's end)
    uint32_t joins, into;       // its record `joins` is the next run's record `into` (both from their firsts)
} guess_run;

struct guess {
    const uint8_t *data, *end;  // the scan's data (to the end of the file)
    mcu_block blocks[10];
    int count;
    guessed_block *found;
    square_part *parts;
    uint32_t capacity, parts_capacity;
    guess_run runs[MAX_RUNS];   // each begins before the one before it
    _Atomic int run_count;
    _Atomic uint64_t first_read;        // bytes of data the first thread has read
    // The guesser's own copy of the data, read from the file (else `data` is the caller's memory):
    // what the file holds is read in order by the first thread, never mapped, so that one cut
    // short while it is read is an error, not a fault.
    int file;
    uint64_t offset;
    size_t length;
    uint8_t *copy;
    _Atomic int stop;
    reader last;                // run 0's reader where it stopped: the end of the scan's data
};

// One block decoded by the guesser into `q` (and `part`); 0 where no block can begin here.
static inline __attribute__((always_inline)) int guess_one(reader *r, const mcu_block *m, guessed_block *q, square_part *part) {
    uint64_t buffer;
    int bits;
    LOAD_BITS();
    int diff;
    WALK_DC(diff, m->dc);
    q->diff = (int16_t)diff;
    if (m->c->square) {
        int16_t values[64] = {0}, *coef = values;
        int any = 0;
        WALK_AC(m->ac, coef, any);
        *part = (square_part){0, 0, {0, 0}};
        if (any && !square_part_of(coef, m->c->quant, part)) return 0;
    } else {
        int16_t *none = NULL;
        int any = 0;
        WALK_AC(m->ac, none, any);
        (void)any;
    }
    if (r->padding > bits) q->flags |= GUESS_PADDED;
    SAVE_BITS();
    return 1;
}

// `at`, or the byte after it where it is the 0x00 of a stuffed 0xFF 0x00: a place that does not
// split one.
static const uint8_t *whole(const uint8_t *at) { return at[-1] == 0xFF ? at + 1 : at; }

// Bits of data from `data` to `at` (a place whole() gave), a stuffed 0xFF 0x00 being one byte of
// data; -1 where a marker comes first (*marker then holds it).
static int64_t bits_to(const uint8_t *data, const uint8_t *at, const uint8_t **marker) {
    int64_t stuffed = 0;
    for (const uint8_t *p = data; (p = memchr(p, 0xFF, (size_t)(at - p))) != NULL; p += 2, stuffed++) {
        if (p[1] != 0) {
            *marker = p;
            return -1;
        }
    }
    return ((int64_t)(at - data) - stuffed) * 8;
}

// Where in `data` (before `limit`) the `count`th byte of data is (a stuffed 0xFF 0x00 is one).
static const uint8_t *byte_of(const uint8_t *data, const uint8_t *limit, uint64_t count) {
    const uint8_t *p = data;
    uint64_t stuffed = 0;
    while ((p = memchr(p, 0xFF, (size_t)(limit - p))) != NULL && p + 1 < limit) {
        if ((uint64_t)(p - data) - stuffed >= count) break;
        stuffed++;
        p += 2;
    }
    uint64_t raw = count + stuffed;
    return raw < (uint64_t)(limit - data) ? data + raw : limit;
}

// The middle of the scan's data, taken to end with the file unless a marker comes before; NULL
// where the data is too short to be worth a second thread.
static const uint8_t *middle_of(const uint8_t *data, const uint8_t *end, uint64_t *bits) {
    for (;;) {
        if (end - data < SPLIT_MIN_BYTES) return NULL;
        const uint8_t *middle = whole(data + (end - data) / 2), *marker = NULL;
        int64_t before = bits_to(data, middle, &marker);
        if (before >= 0) {
            *bits = (uint64_t)before;
            return middle;
        }
        end = marker;  // a marker before the middle: the scan ends there
    }
}

// Run `k` of the guesser, from its start until it falls into step with run k - 1 (or, run 0,
// reaches the end of the data). Its state says how it ended.
static void guess_run_blocks(struct guess *g, int k, uint32_t *found, uint32_t *parts) {
    guess_run *run = &g->runs[k], *next = k > 0 ? &g->runs[k - 1] : NULL;
    reader state = {.p = run->start, .n = (size_t)(g->end - run->start), .in_memory = 1};
    uint64_t next_start = next ? next->base - run->base : UINT64_MAX;  // in this run's bits
    uint32_t next_count = next ? atomic_load_explicit(&next->published, memory_order_acquire) : 0, cursor = 0, past = 0;
    int phase = 0, again = 0, outcome = RUN_GAVE_UP;
    while (*found < g->capacity && !atomic_load_explicit(&g->stop, memory_order_relaxed)) {
        if (state.bits < 32) fill_bits(&state);
        if (state.marker && state.padding >= state.bits) {  // nothing left but padding
            if (!next) {
                g->last = state;
                outcome = RUN_JOINED;
            }
            break;
        }
        uint64_t at = state.loaded * 8 - (uint64_t)state.bits;
        if (at >= next_start) {
            uint64_t there = at - next_start;
            while (cursor < next_count && g->found[next->first + cursor].at < there) cursor++;
            if (cursor < next_count && g->found[next->first + cursor].at == there && g->found[next->first + cursor].phase == phase) {
                run->joins = *found - run->first;
                run->into = cursor;
                outcome = RUN_JOINED;
                break;
            }
            if (++past > RUN_SLACK || cursor == next_count) break;
        }
        int square = g->blocks[phase].c->square;
        if (square && *parts == g->parts_capacity) break;
        guessed_block *q = &g->found[*found];
        q->at = (uint32_t)at;
        q->phase = (uint8_t)phase;
        q->flags = again ? GUESS_AGAIN : 0;
        q->part = *parts;
        if (!guess_one(&state, &g->blocks[phase], q, &g->parts[square ? *parts : 0])) {
            // Not a block here (a code no table has): begin again at the next byte not yet read.
            state.bits = 0;
            state.buffer = 0;
            again = 1;
            phase = 0;
            continue;
        }
        again = 0;
        phase = phase + 1 == g->count ? 0 : phase + 1;
        *parts += (uint32_t)square;
        (*found)++;
        if ((*found & 63) == 0) atomic_store_explicit(&run->published, *found - run->first, memory_order_release);
    }
    atomic_store_explicit(&run->published, *found - run->first, memory_order_release);
    atomic_store_explicit(&run->state, outcome, memory_order_release);
}

// The guesser's thread: run 0 from the middle of the data; then, while the first thread is far
// enough behind the last run's start, another from halfway between.
static void *guess_blocks(void *argument) {
    struct guess *g = argument;
    if (!g->data) {
        g->copy = malloc(g->length);
        size_t got = 0;
        while (g->copy && got < g->length) {
            ssize_t n = pread(g->file, g->copy + got, g->length - got, (off_t)(g->offset + got));
            if (n <= 0) break;
            got += (size_t)n;
        }
        if (!g->copy || got < SPLIT_MIN_BYTES) return NULL;  // the first thread decodes alone
        g->data = g->copy;
        g->end = g->copy + got;
    }
    uint32_t found = 0, parts = 0;
    uint64_t base = 0;
    const uint8_t *start = middle_of(g->data, g->end, &base);
    for (int k = 0; start && k < MAX_RUNS && !atomic_load_explicit(&g->stop, memory_order_relaxed); k++) {
        g->runs[k].start = start;
        g->runs[k].base = base;
        g->runs[k].first = found;
        atomic_store_explicit(&g->run_count, k + 1, memory_order_release);
        guess_run_blocks(g, k, &found, &parts);
        if (atomic_load_explicit(&g->runs[k].state, memory_order_relaxed) != RUN_JOINED) break;
        const uint8_t *from = byte_of(g->data, start, atomic_load_explicit(&g->first_read, memory_order_acquire) + 4096);
        if (start - from < SPLIT_MIN_BYTES / 2) break;
        const uint8_t *marker = NULL;
        start = whole(from + (start - from) / 2);
        int64_t before = bits_to(g->data, start, &marker);  // no marker: it is before run 0's start
        if (before < 0) break;
        base = (uint64_t)before;
    }
    return NULL;
}

// Whether the first thread's block that begins `at` bits into the data, at `phase` in its MCU, is
// a guessed one, in the run that begins last before it (st->guess_run, st->guess_index then).
static int in_step(scan_state *st, uint64_t at, int phase) {
    struct guess *g = st->guess;
    int runs = atomic_load_explicit(&g->run_count, memory_order_acquire), best = -1;
    for (int k = 0; k < runs; k++)
        if (g->runs[k].base <= at && (best < 0 || g->runs[k].base > g->runs[best].base)) best = k;
    if (best < 0) return 0;
    guess_run *run = &g->runs[best];
    uint64_t relative = at - run->base;
    uint32_t *cursor = &st->guess_cursor[best];
    uint32_t published = atomic_load_explicit(&run->published, memory_order_acquire);
    while (*cursor < published && g->found[run->first + *cursor].at < relative) (*cursor)++;
    // Where the guesser is behind (or has given up) this thread goes on: once in step, every
    // later block of the guesser's is one of this thread's, so a later one will do.
    if (*cursor == published) return 0;
    const guessed_block *q = &g->found[run->first + *cursor];
    if (q->at != relative || q->phase != phase) return 0;
    st->guess_run = best;
    st->guess_index = *cursor;
    return 1;
}

// At each row of MCUs: tells the guesser how far this thread has read, and notes where its
// earliest run begins.
static void watch_guesses(scan_state *st, const reader *r) {
    struct guess *g = st->guess;
    atomic_store_explicit(&g->first_read, r->loaded, memory_order_release);
    int runs = atomic_load_explicit(&g->run_count, memory_order_acquire);
    uint64_t watch = UINT64_MAX;
    for (int k = 0; k < runs; k++)
        if (g->runs[k].base < watch) watch = g->runs[k].base;
    st->guess_watch = watch;
}

// Where the next taken block goes: its place in its MCU and the MCU's.
typedef struct {
    int phase;
    uint32_t mx, my;
} block_place;

// One guessed block into the planes at `at` (then moved on), its DC difference summed on.
static int take_guess(scan_state *st, struct guess *g, const mcu_block *blocks, int count, block_place *at,
                      const guessed_block *q, int first, uint32_t mcus_wide) {
    const scan *s = st->s;
    if ((!first && (q->flags & GUESS_AGAIN)) || (q->flags & GUESS_PADDED)) return 0;
    const mcu_block *m = &blocks[at->phase];
    component *c = m->c;
    uint32_t bx = at->mx * (uint32_t)(s->count == 1 ? 1 : c->h) + m->x, by = at->my * (uint32_t)(s->count == 1 ? 1 : c->v) + m->y;
    if (++at->phase == count) {
        at->phase = 0;
        if (++at->mx == mcus_wide) {
            at->mx = 0;
            at->my++;
        }
    }
    unsigned sum = (unsigned)st->predictor[m->k] + (unsigned)q->diff;
    st->predictor[m->k] = (int)sum;
    if (!c->square) {
        c->dc[(size_t)by * c->plane_wide + bx] = (int16_t)sum;
        return 1;
    }
    size_t stride = 2 * (size_t)c->plane_wide;
    return square_finish((int16_t)sum, c->quant[0], &g->parts[q->part], c->samples + 2 * (size_t)by * stride + 2 * (size_t)bx, stride);
}

static void end_guessing(struct guess *g, pthread_t thread, int started);
static void make_samples_rows(eighth *e, uint64_t from, uint64_t to);
static int read_to_end(reader *r, eighth *e, scan *s, tables *t, int progressive, int one_scan, const int *fatal_warning);

// The rest of a two-thread decode once the threads met: the guesses still to take, taken as rows
// are asked for, so that the rows above the meeting are made (and downscaled) while the guesser
// decodes on.
struct pending {
    struct guess *g;
    pthread_t thread;
    scan s;
    tables t;
    reader r;
    scan_state st;        // the first thread's, its predictors where it stopped
    mcu_block blocks[10];
    int count;
    block_place at;       // where the next block taken goes
    int run, first;
    uint32_t index;       // the next guess to take, in run `run`
    uint32_t mcus_wide, mcus_high, rows_made;
    const int *fatal_warning;
};

static void end_pending(eighth *e) {
    struct pending *p = e->pending;
    if (!p) return;
    end_guessing(p->g, p->thread, 1);
    free(p);
    e->pending = NULL;
}

// Takes the guesses, run after run in the data's order, until MCU row `limit` is whole and its
// pixels made; at the scan's end, the markers after it read and the guesser let go. 0 where the
// guesses do not reach it cleanly (the data ran out, a run began again or gave up, a marker out of
// place): libjpeg then says what is wrong.
static int take_until(eighth *e, uint64_t limit) {
    struct pending *p = e->pending;
    struct guess *g = p->g;
    if (limit > p->mcus_high) limit = p->mcus_high;
    while (p->at.my < limit) {
        guess_run *run = &g->runs[p->run];
        int state = atomic_load_explicit(&run->state, memory_order_acquire);
        uint32_t published = atomic_load_explicit(&run->published, memory_order_acquire);
        if (p->run > 0 && state == RUN_JOINED && p->index == run->joins) {  // on into the next run
            p->index = run->into;
            p->run--;
            p->first = 1;
            continue;
        }
        if (p->index >= published) {
            if (state != RUN_GOING) return 0;  // it stopped short
            sched_yield();
            continue;
        }
        uint32_t end = p->run > 0 && state == RUN_JOINED ? run->joins : published;
        for (; p->index < end && p->at.my < limit; p->index++, p->first = 0)
            if (!take_guess(&p->st, g, p->blocks, p->count, &p->at, &g->found[run->first + p->index], p->first, p->mcus_wide)) return 0;
    }
    make_samples_rows(e, p->rows_made, p->at.my);
    p->rows_made = p->at.my;
    if (p->at.my < p->mcus_high) return 1;
    while (atomic_load_explicit(&g->runs[0].state, memory_order_acquire) == RUN_GOING) sched_yield();
    if (atomic_load_explicit(&g->runs[0].state, memory_order_acquire) != RUN_JOINED) return 0;
    reader last = g->last;  // at the end of the scan's data, in the guesser's copy
    int ok = read_to_end(&last, e, &p->s, &p->t, 0, 1, p->fatal_warning);
    end_pending(e);
    return ok;
}

static void end_guessing(struct guess *g, pthread_t thread, int started) {
    if (started) {
        atomic_store_explicit(&g->stop, 1, memory_order_relaxed);
        pthread_join(thread, NULL);
    }
    free(g->found);
    free(g->parts);
    free(g->copy);
    free(g);
}

// Starts the guesser and decodes here until in step with it: 2 then, the guesser and its thread
// in *kept and *kept_thread; 1 where this thread decoded the whole scan, 0 on bad data.
static int decode_split(scan_state *st, const eighth_more *more, uint32_t mcus_wide, uint32_t mcus_high, struct guess **kept,
                        pthread_t *kept_thread) {
    struct guess *g = calloc(1, sizeof *g);
    if (!g) return decode_sequential(st, mcus_wide, 0, mcus_high, 0);
    if (more->data) {
        g->data = more->data;
        g->end = more->data + more->length;
    } else {
        g->file = more->file;
        g->offset = more->offset;
        g->length = more->length;
    }
    g->count = mcu_layout(st, g->blocks);
    uint64_t total = (uint64_t)mcus_wide * mcus_high * (uint64_t)g->count;
    g->capacity = (uint32_t)(total + (MAX_RUNS + 1) * RUN_SLACK);  // every block, and what runs overlap by
    int squares = 0;
    for (int b = 0; b < g->count; b++) squares += g->blocks[b].c->square;
    g->parts_capacity = (uint32_t)((uint64_t)g->capacity * (uint64_t)squares / (uint64_t)g->count + 2 * MAX_RUNS);
    g->found = malloc((size_t)g->capacity * sizeof *g->found);
    g->parts = malloc((size_t)g->parts_capacity * sizeof *g->parts);
    pthread_t thread;
    int started = g->found && g->parts && pthread_create(&thread, NULL, guess_blocks, g) == 0;
    st->guess = started ? g : NULL;
    memset(st->guess_cursor, 0, sizeof st->guess_cursor);
    int result = decode_sequential(st, mcus_wide, 0, mcus_high, 0);
    st->guess = NULL;
    if (result == 2) {  // only with the guesser started
        *kept = g;
        *kept_thread = thread;
        return 2;
    }
    end_guessing(g, thread, started);
    return result;
}

// One block of a progressive DC scan.
static inline int progressive_block(scan_state *st, int k, component *c, uint32_t bx, uint32_t by) {
    reader *r = st->r;
    if (r->bits < 32) fill_bits(r);
    int16_t *dc = &c->dc[(size_t)by * c->plane_wide + bx];
    if (st->s->ah == 0) {
        int s = decode(r, &st->dc[st->s->dc_table[k]]);
        if (s < 0) return 0;
        if (s) s = receive(r, s);
        int last = st->predictor[k];
        if ((last >= 0 && s > INT_MAX - last) || (last < 0 && s < INT_MIN - last)) return 0;  // libjpeg: an error
        st->predictor[k] = last + s;
        *dc = (int16_t)(int)((unsigned)(last + s) << st->s->al);
    } else {
        if (peek(r, 1)) *dc = (int16_t)(*dc | (1 << st->s->al));
        r->bits -= 1;
    }
    return 1;
}

static int decode_scan(scan_state *st, int progressive, int restart_interval) {
    reader *r = st->r;
    eighth *e = st->e;
    const scan *s = st->s;
    uint32_t mcus_wide, mcus_high;
    if (s->count == 1) {
        mcus_wide = e->c[s->index[0]].blocks_wide;
        mcus_high = e->c[s->index[0]].blocks_high;
    } else {
        mcus_wide = mcu_count(r->cinfo->image_width, e->max_h);
        mcus_high = mcu_count(r->cinfo->image_height, e->max_v);
    }
    if (!progressive) return decode_sequential(st, mcus_wide, 0, mcus_high, restart_interval);
    int to_go = restart_interval, next = 0;
    for (uint32_t my = 0; my < mcus_high; my++) {
        for (uint32_t mx = 0; mx < mcus_wide; mx++) {
            if (restart_interval) {
                if (to_go == 0) {
                    if (!restart(st, &next)) return 0;
                    to_go = restart_interval;
                }
                to_go--;
            }
            for (int k = 0; k < s->count; k++) {
                component *c = &e->c[s->index[k]];
                int h = s->count == 1 ? 1 : c->h, v = s->count == 1 ? 1 : c->v;
                for (int y = 0; y < v; y++) {
                    for (int x = 0; x < h; x++) {
                        uint32_t bx = mx * (uint32_t)h + (uint32_t)x, by = my * (uint32_t)v + (uint32_t)y;
                        if (!progressive_block(st, k, c, bx, by)) return 0;
                    }
                }
            }
            if (r->padding > r->bits) return 0;  // libjpeg would have warned that the data ran out
        }
    }
    if (r->padding > r->bits) return 0;
    return 1;
}

// libjpeg's checks of a progressive scan (start_pass_phuff_decoder): 0 where it errors or warns.
static int check_progression(eighth *e, const scan *s) {
    int dc_band = s->ss == 0;
    if (dc_band ? s->se != 0 : (s->ss > s->se || s->se >= 64 || s->count != 1)) return 0;
    if (s->ah != 0 && s->al != s->ah - 1) return 0;
    if (s->al > 13) return 0;
    for (int k = 0; k < s->count; k++) {
        int *bits = e->c[s->index[k]].coef_bits;
        if (!dc_band && bits[0] < 0) return 0;
        for (int i = s->ss; i <= s->se; i++) {
            int expected = bits[i] < 0 ? 0 : bits[i];
            if (s->ah != expected) return 0;
            bits[i] = s->al;
        }
    }
    return 1;
}

// Skips an AC scan of a progressive file: to the next marker that is not a restart.
static int skip_scan(reader *r) {
    for (;;) {
        int m = next_marker(r);
        if (m == 0) return 0;
        if (m < 0xD0 || m > 0xD7) return m;
    }
}

// MARK: The image

// The blocks setup() allocates: each component's padded to whole MCUs.
static uint64_t blocks_needed(j_decompress_ptr cinfo) {
    uint64_t mcus_wide = mcu_count(cinfo->image_width, cinfo->max_h_samp_factor);
    uint64_t mcus_high = mcu_count(cinfo->image_height, cinfo->max_v_samp_factor);
    if (cinfo->num_components == 1) return ((cinfo->image_width + 7u) / 8) * (uint64_t)((cinfo->image_height + 7u) / 8);
    uint64_t total = 0;
    for (int ci = 0; ci < cinfo->num_components; ci++)
        total += mcus_wide * (uint64_t)cinfo->comp_info[ci].h_samp_factor * mcus_high * (uint64_t)cinfo->comp_info[ci].v_samp_factor;
    return total;
}

int eighth_eligible(j_decompress_ptr cinfo) {
    if (cinfo->data_precision != 8 || cinfo->arith_code || cinfo->CCIR601_sampling) return 0;
    if (cinfo->image_width == 0 || cinfo->image_height == 0) return 0;
    if (cinfo->num_components != 1 && cinfo->num_components != 3) return 0;
    int one_scan = !cinfo->progressive_mode && cinfo->comps_in_scan == cinfo->num_components;
    if (!one_scan && blocks_needed(cinfo) > MAX_BLOCKS) return 0;
    if (cinfo->num_components == 1) return cinfo->jpeg_color_space == JCS_GRAYSCALE;
    if (cinfo->num_components != 3 || cinfo->jpeg_color_space != JCS_YCbCr) return 0;
    const jpeg_component_info *c = cinfo->comp_info;
    if (c[1].h_samp_factor != 1 || c[1].v_samp_factor != 1 || c[2].h_samp_factor != 1 || c[2].v_samp_factor != 1)
        return 0;
    // 4:4:4 and 4:2:2; 4:2:0 in one sequential scan (its chroma's 2×2 IDCT needs AC coefficients,
    // which a progressive file's AC scans would give).
    if (c[0].h_samp_factor == 2 && c[0].v_samp_factor == 2) return one_scan;
    return c[0].v_samp_factor == 1 && (c[0].h_samp_factor == 1 || c[0].h_samp_factor == 2);
}

uint64_t eighth_held_bytes(j_decompress_ptr cinfo) {
    int one_scan = !cinfo->progressive_mode && cinfo->comps_in_scan == cinfo->num_components;
    return one_scan ? 0 : 3 * blocks_needed(cinfo);  // an int16_t DC and a sample a block
}

static int setup(eighth *e, j_decompress_ptr cinfo) {
    e->count = cinfo->num_components;
    e->width = (cinfo->image_width + 7) / 8;
    e->height = (cinfo->image_height + 7) / 8;
    e->max_h = cinfo->max_h_samp_factor;
    e->max_v = cinfo->max_v_samp_factor;
    for (int ci = 0; ci < e->count; ci++) {
        const jpeg_component_info *info = &cinfo->comp_info[ci];
        component *c = &e->c[ci];
        c->h = e->count == 1 ? 1 : info->h_samp_factor;
        c->v = e->count == 1 ? 1 : info->v_samp_factor;
        c->id = info->component_id;
        c->table = info->quant_tbl_no;
        if (c->table < 0 || c->table > 3) return 0;
        uint64_t hs = (uint64_t)info->h_samp_factor, vs = (uint64_t)info->v_samp_factor;
        c->blocks_wide = (uint32_t)((cinfo->image_width * hs + 8u * e->max_h - 1) / (8u * e->max_h));
        c->blocks_high = (uint32_t)((cinfo->image_height * vs + 8u * e->max_v - 1) / (8u * e->max_v));
        if (e->count == 1) {
            c->blocks_wide = (cinfo->image_width + 7) / 8;
            c->blocks_high = (cinfo->image_height + 7) / 8;
        }
        uint32_t mcus_wide = mcu_count(cinfo->image_width, e->max_h), mcus_high = mcu_count(cinfo->image_height, e->max_v);
        c->plane_wide = e->count == 1 ? c->blocks_wide : mcus_wide * (uint32_t)c->h;
        c->plane_high = e->count == 1 ? c->blocks_high : mcus_high * (uint32_t)c->v;
        if (e->stream) c->plane_high = (uint32_t)c->v;  // one MCU row
        c->square = e->max_v == 2 && ci > 0;
        uint64_t blocks = (uint64_t)c->plane_wide * c->plane_high;  // within MAX_BLOCKS: eighth_eligible checked
        c->dc = calloc(blocks ? blocks : 1, sizeof(int16_t));
        c->samples = malloc(blocks ? (c->square ? 4 * blocks : blocks) : 1);
        if (!c->dc || !c->samples) return 0;
        for (int i = 0; i < 64; i++) c->coef_bits[i] = -1;
    }
    return 1;
}

static int latch(component *c, const tables *t) {
    if (c->latched) return 1;
    if (!t->quant_defined[c->table]) return 0;
    for (int i = 0; i < 64; i++) c->quant[i] = (int16_t)t->quant[c->table][i];
    c->latched = 1;
    return 1;
}

// A scan's checks (libjpeg's), its tables derived, the reader at its data. 0 where libjpeg would stop.
static int prepare_scan(reader *r, eighth *e, const scan *s, tables *t, int progressive, scan_state *st) {
    memset(st->predictor, 0, sizeof st->predictor);
    st->r = r;
    st->e = e;
    st->s = s;
    st->padded = 0;
    st->to_go = t->restart_interval;
    st->next_restart = 0;
    st->row_base = 0;
    st->guess = NULL;
    st->guess_index = 0;
    st->guess_watch = UINT64_MAX;
    if (!progressive && (s->ss != 0 || s->se != 63 || s->ah != 0 || s->al != 0)) return 0;
    if (progressive && !check_progression(e, s)) return 0;
    for (int k = 0; k < s->count; k++) {
        component *c = &e->c[s->index[k]];
        if (!latch(c, t)) return 0;
        c->seen = 1;
        int dc_needed = !progressive || (s->ss == 0 && s->ah == 0), ac_needed = !progressive || s->ss > 0;
        // libjpeg checks a table's number only where the scan uses the table.
        if ((dc_needed && s->dc_table[k] > 3) || (ac_needed && s->ac_table[k] > 3)) return 0;
        if (dc_needed && !derive(&t->dc[s->dc_table[k]], 1, &st->dc[s->dc_table[k]])) return 0;
        if (ac_needed && !derive(&t->ac[s->ac_table[k]], 0, &st->ac[s->ac_table[k]])) return 0;
    }
    if (s->count > 1) {
        int blocks = 0;
        for (int k = 0; k < s->count; k++) blocks += e->c[s->index[k]].h * e->c[s->index[k]].v;
        if (blocks > 10) return 0;
    }
    r->bits = 0;
    r->buffer = 0;
    r->padding = 0;
    r->marker = 0;
    return 1;
}

static int run_scan(reader *r, eighth *e, const scan *s, tables *t, int progressive) {
    scan_state st;
    if (!prepare_scan(r, e, s, t, progressive, &st)) return 0;
    if (progressive && s->ss > 0) {
        int m = skip_scan(r);
        if (!m) return 0;
        r->marker = m;
        return 1;
    }
    if (!decode_scan(&st, progressive, t->restart_interval) || st.padded) return 0;
    return 1;
}

// After the scans that were decoded: the markers to the end of the image, any further scans
// decoded (`one_scan`: libjpeg stops at a second one).
static int read_to_end(reader *r, eighth *e, scan *s, tables *t, int progressive, int one_scan, const int *fatal_warning) {
    for (;;) {
        int m = r->marker ? r->marker : next_marker(r);
        r->marker = 0;
        if (m == 0xD9) break;
        int ok;
        switch (m) {
        case 0xDA:
            ok = !one_scan && read_sos(r, e, s) && run_scan(r, e, s, t, progressive);
            break;
        case 0xC4: ok = read_dht(r, t); break;
        case 0xDB: ok = read_dqt(r, t); break;
        case 0xDD: ok = read_dri(r, t); break;
        case 0xD0: case 0xD1: case 0xD2: case 0xD3: case 0xD4: case 0xD5: case 0xD6: case 0xD7: ok = 1; break;
        default:
            ok = (m >= 0xE0 && m <= 0xEF) || m == 0xFE ? skip_segment(r) : 0;
        }
        if (!ok || *fatal_warning) return 0;
    }
    if (*fatal_warning) return 0;
    for (int ci = 0; ci < e->count; ci++)
        if (!e->c[ci].seen) return 0;
    return 1;
}

struct stream {
    reader r;
    scan s;
    tables t;
    scan_state st;
    uint32_t mcus_wide, mcus_high, next_row;
    uint32_t mcu_rows;  // decoded
    uint32_t tall;      // output rows an MCU row gives: 2 for 4:2:0, else 1
    const int *fatal_warning;
};

// Each component's pixels, from the DC coefficients of its planes.
// Each component's pixels of MCU rows [from, to) of its planes, from their DC coefficients.
static void make_samples_rows(eighth *e, uint64_t from, uint64_t to) {
    for (int ci = 0; ci < e->count; ci++) {
        component *c = &e->c[ci];
        if (c->square) continue;  // made as its blocks were walked
        int q = c->quant[0];
        uint64_t v = e->count == 1 ? 1 : (uint64_t)c->v, last = to * v < c->plane_high ? to * v : c->plane_high;
        for (size_t i = (size_t)(from * v) * c->plane_wide; i < (size_t)last * c->plane_wide; i++) {
            int value = c->dc[i] * q;
            c->samples[i] = idct_limit[((value + 4) >> 3) & 1023];
        }
    }
}

static void make_samples(eighth *e) { make_samples_rows(e, 0, UINT32_MAX); }

// Whether eighth_decode would decode the image on two threads, given `length` bytes in memory.
static int splits(j_decompress_ptr cinfo, uint64_t length) {
    int one_scan = !cinfo->progressive_mode && cinfo->comps_in_scan == cinfo->num_components;
    return one_scan && length >= SPLIT_MIN_BYTES && length <= SPLIT_MAX_BYTES && cinfo->restart_interval == 0 &&
           blocks_needed(cinfo) <= SPLIT_MAX_BLOCKS;
}

int eighth_takes(j_decompress_ptr cinfo, uint64_t length) {
    if (!eighth_eligible(cinfo)) return 0;
    // 4:2:0 on one thread is slower here than in libjpeg-turbo (its chroma's IDCT in SIMD).
    int square = cinfo->num_components == 3 && cinfo->comp_info[0].v_samp_factor == 2;
    return !square || splits(cinfo, length);
}

eighth *eighth_decode(j_decompress_ptr cinfo, int *fatal_warning, const eighth_more *more) {
    // Decoders on several threads (an in-process warm) may start at once: the tables are made once.
    static pthread_once_t tables_made = PTHREAD_ONCE_INIT;
    pthread_once(&tables_made, make_tables);
    int progressive = cinfo->progressive_mode;
    // A sequential image whose first scan holds every component has one scan (libjpeg stops at a
    // second): it is decoded as its rows are asked for, in planes one MCU row high.
    int one_scan = !progressive && cinfo->comps_in_scan == cinfo->num_components;
    // On two threads, held whole: a one-scan image without restart markers, its data in memory.
    int split = more && splits(cinfo, more->length);
    eighth *e = calloc(1, sizeof *e);
    tables *t = calloc(1, sizeof *t);
    struct stream *stream = one_scan && !split ? calloc(1, sizeof *stream) : NULL;
    if (!e || !t || (one_scan && !split && !stream)) goto fail;
    e->stream = stream;
    if (!setup(e, cinfo)) goto fail;
    e->tall = e->count == 1 ? 1 : (uint32_t)e->max_v;
    for (int i = 0; i < 4; i++) {
        copy_raw(cinfo->dc_huff_tbl_ptrs[i], &t->dc[i]);
        copy_raw(cinfo->ac_huff_tbl_ptrs[i], &t->ac[i]);
        if (cinfo->quant_tbl_ptrs[i]) {
            memcpy(t->quant[i], cinfo->quant_tbl_ptrs[i]->quantval, sizeof t->quant[i]);
            t->quant_defined[i] = 1;
        }
    }
    t->restart_interval = (int)cinfo->restart_interval;
    reader r = {.cinfo = cinfo, .src = cinfo->src, .p = cinfo->src->next_input_byte, .n = cinfo->src->bytes_in_buffer};
    scan s = {.count = cinfo->comps_in_scan, .ss = cinfo->Ss, .se = cinfo->Se, .ah = cinfo->Ah, .al = cinfo->Al};
    for (int k = 0; k < s.count; k++) {
        s.index[k] = cinfo->cur_comp_info[k]->component_index;
        s.dc_table[k] = cinfo->cur_comp_info[k]->dc_tbl_no;
        s.ac_table[k] = cinfo->cur_comp_info[k]->ac_tbl_no;
    }
    if (one_scan && !split) {
        stream->r = r;
        stream->s = s;
        stream->t = *t;
        stream->fatal_warning = fatal_warning;
        // One component's scan is not interleaved: an MCU is one of its blocks, whatever its factors.
        stream->mcus_wide = e->count == 1 ? e->c[0].blocks_wide : mcu_count(cinfo->image_width, e->max_h);
        stream->mcus_high = e->count == 1 ? e->c[0].blocks_high : mcu_count(cinfo->image_height, e->max_v);
        stream->tall = e->count == 1 ? 1 : (uint32_t)e->max_v;
        if (!prepare_scan(&stream->r, e, &stream->s, &stream->t, 0, &stream->st)) goto fail;
        free(t);
        return e;
    }
    if (split) {
        struct pending *p = calloc(1, sizeof *p);
        if (!p) goto fail;
        p->s = s;
        p->t = *t;
        p->r = r;
        p->fatal_warning = fatal_warning;
        p->mcus_wide = e->count == 1 ? e->c[0].blocks_wide : mcu_count(cinfo->image_width, e->max_h);
        p->mcus_high = e->count == 1 ? e->c[0].blocks_high : mcu_count(cinfo->image_height, e->max_v);
        int result = prepare_scan(&p->r, e, &p->s, &p->t, 0, &p->st) ? decode_split(&p->st, more, p->mcus_wide, p->mcus_high, &p->g, &p->thread) : 0;
        e->threads_used = result == 2 ? 2 : 1;
        if (result == 2) {
            e->pending = p;
            p->count = mcu_layout(&p->st, p->blocks);
            p->at = (block_place){p->st.from_phase, (uint32_t)(p->st.from_mcu % p->mcus_wide), (uint32_t)(p->st.from_mcu / p->mcus_wide)};
            p->run = p->st.guess_run;
            p->index = p->st.guess_index;
            p->first = 1;
            make_samples_rows(e, 0, p->at.my);
            p->rows_made = p->at.my;
            free(t);
            return e;
        }
        int ok = result == 1 && !p->st.padded && read_to_end(&p->r, e, &p->s, &p->t, 0, 1, fatal_warning);
        free(p);
        if (!ok) goto fail;
        make_samples(e);
        free(t);
        return e;
    }
    if (!run_scan(&r, e, &s, t, progressive)) goto fail;
    if (!read_to_end(&r, e, &s, t, progressive, 0, fatal_warning)) goto fail;
    make_samples(e);
    free(t);
    return e;
fail:
    free(t);
    eighth_free(e);
    return NULL;
}

uint32_t eighth_width(const eighth *e) { return e->width; }
int eighth_threads_used(const eighth *e) { return e->threads_used ? e->threads_used : 1; }
uint32_t eighth_height(const eighth *e) { return e->height; }

// jdcolor.c's tables for YCbCr to RGB (build_ycc_rgb_table), made once.
static int cr_r[256], cb_b[256], cr_g[256], cb_g[256];

static void make_color(void) {
    for (int i = 0, x = -128; i < 256; i++, x++) {
        cr_r[i] = (int)((91881 * (int64_t)x + 32768) >> 16);   // FIX(1.40200)
        cb_b[i] = (int)((116130 * (int64_t)x + 32768) >> 16);  // FIX(1.77200)
        cr_g[i] = -46802 * x;                                  // -FIX(0.71414)
        cb_g[i] = -22554 * x + 32768;                          // -FIX(0.34414), with ONE_HALF
    }
}

static inline uint8_t clamp(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

// A row whose chroma has a sample a pixel (4:4:4, and 4:2:0 at 1/8): make_color's sums worked out
// in place, the same integers, which the compiler turns into vector code (its tables' lookups it
// cannot): a 500-pixel row's colours in a quarter of the time.
static void compose_unshifted(const uint8_t *ys, const uint8_t *cb, const uint8_t *cr, uint8_t *row, uint32_t width) {
    for (uint32_t x = 0; x < width; x++) {
        int l = ys[x], b = cb[x] - 128, r = cr[x] - 128;
        int red = l + ((91881 * r + 32768) >> 16), green = l + ((-22554 * b - 46802 * r + 32768) >> 16), blue = l + ((116130 * b + 32768) >> 16);
        row[4 * x] = clamp(red);
        row[4 * x + 1] = clamp(green);
        row[4 * x + 2] = clamp(blue);
        row[4 * x + 3] = 255;
    }
}

// Output row `y` of the planes (the only row of a streamed image's: 0).
static void compose(const eighth *e, uint32_t y, uint8_t *row) {
    const component *Y = &e->c[0];
    if (e->count == 1) {
        const uint8_t *s = Y->samples + (size_t)y * Y->plane_wide;
        for (uint32_t x = 0; x < e->width; x++) {
            row[4 * x] = row[4 * x + 1] = row[4 * x + 2] = s[x];
            row[4 * x + 3] = 255;
        }
        return;
    }
    const uint8_t *ys = Y->samples + (size_t)y * Y->plane_wide;
    // 4:2:2's chroma sample serves two pixels (libjpeg's h2v1 upsampling, merged or not: the same
    // sums); 4:2:0's chroma has a pixel each, twice as many a block (its rows as wide as luma's).
    int square = e->c[1].square, shift = Y->h == 2 && !square;
    size_t chroma_row = square ? (size_t)y * 2 * e->c[1].plane_wide : (size_t)y * e->c[1].plane_wide;
    const uint8_t *cb = e->c[1].samples + chroma_row;
    const uint8_t *cr = e->c[2].samples + chroma_row;
    if (!shift) {
        compose_unshifted(ys, cb, cr, row, e->width);
        return;
    }
    for (uint32_t x = 0; x < e->width; x++) {
        int l = ys[x], b = cb[x >> shift], r = cr[x >> shift];
        row[4 * x] = clamp(l + cr_r[r]);
        row[4 * x + 1] = clamp(l + ((cb_g[b] + cr_g[r]) >> 16));
        row[4 * x + 2] = clamp(l + cb_b[b]);
        row[4 * x + 3] = 255;
    }
}

int eighth_row(eighth *e, uint32_t y, uint8_t *row) {
    struct stream *stream = e->stream;
    if (!stream) {
        if (e->pending && !take_until(e, (uint64_t)y / e->tall + 1)) return 0;
        compose(e, y, row);
        return 1;
    }
    if (y != stream->next_row) return 0;
    uint32_t mcu_row = y / stream->tall;
    if (mcu_row == stream->mcu_rows) {
        stream->st.row_base = mcu_row;
        if (!decode_sequential(&stream->st, stream->mcus_wide, mcu_row, mcu_row + 1, stream->t.restart_interval)) return 0;
        make_samples(e);
        stream->mcu_rows++;
    }
    stream->next_row++;
    compose(e, y % stream->tall, row);
    return 1;
}

int eighth_finish(eighth *e) {
    struct stream *stream = e->stream;
    if (!stream) return e->pending ? take_until(e, UINT64_MAX) : 1;
    if (stream->mcu_rows != stream->mcus_high || stream->st.padded) return 0;
    return read_to_end(&stream->r, e, &stream->s, &stream->t, 0, 1, stream->fatal_warning);
}

void eighth_free(eighth *e) {
    if (!e) return;
    end_pending(e);
    for (int ci = 0; ci < 3; ci++) {
        free(e->c[ci].dc);
        free(e->c[ci].samples);
    }
    free(e->stream);
    free(e);
}
