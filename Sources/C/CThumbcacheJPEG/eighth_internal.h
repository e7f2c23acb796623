#ifndef CJPEG_EIGHTH_INTERNAL_H
#define CJPEG_EIGHTH_INTERNAL_H
// The 1/8 decoder's parts (eighth.h says what it does), shared by its three files: eighth.c walks
// the entropy-coded data (markers, tables, scans, the image's life); eighth_split.c decodes a
// one-scan image on two threads; eighth_pixels.c turns the kept coefficients into pixels. What is
// here is what more than one of them needs: the decoder's state, the bit reader and the block walk
// (inline, for the hot loops), and the 2×2 IDCT of a 4:2:0 chroma block.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>  // jpeglib.h needs FILE
#include <string.h>
#include <jpeglib.h>

#include "eighth.h"

struct stream;
struct pending;
struct guess;

// A progressive or multi-scan image is held whole here, 3 bytes a block: one of more blocks (48 MB,
// a 4:4:4 image of 358 MP) is left to libjpeg. A one-scan sequential image is streamed, of any size.
enum { LOOKAHEAD = 9, MAX_BLOCKS = 1 << 24 };

// MCUs across `size` pixels of an interleaved scan, whose MCU is 8 × `max_factor` pixels that way.
static inline uint32_t mcu_count(uint32_t size, int max_factor) { return (size + 8u * (uint32_t)max_factor - 1) / (8u * (uint32_t)max_factor); }

// The MCUs across and down a scan of every component. One component's scan is not interleaved:
// its MCU is one block, whatever its sampling factors.
static inline void scan_mcus(j_decompress_ptr cinfo, uint32_t *wide, uint32_t *high) {
    int one = cinfo->num_components == 1;
    *wide = one ? (cinfo->image_width + 7) / 8 : mcu_count(cinfo->image_width, cinfo->max_h_samp_factor);
    *high = one ? (cinfo->image_height + 7) / 8 : mcu_count(cinfo->image_height, cinfo->max_v_samp_factor);
}

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

typedef struct {
    raw_table dc[4], ac[4];
    uint16_t quant[4][64];  // natural order
    int quant_defined[4];
    int restart_interval;
} tables;

typedef struct {
    int count;
    int index[4];  // into eighth.c
    int dc_table[4], ac_table[4];
    int ss, se, ah, al;
} scan;

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

// What the three files call of each other's (hidden: internal to the shim).
#define EIGHTH_INTERNAL __attribute__((visibility("hidden")))

// eighth.c: the walk.
EIGHTH_INTERNAL void eighth_fill_bits(reader *r);
EIGHTH_INTERNAL int eighth_decode_sequential(scan_state *st, uint32_t mcus_wide, uint32_t from, uint32_t to, int restart_interval);
EIGHTH_INTERNAL int eighth_prepare_scan(reader *r, eighth *e, const scan *s, tables *t, int progressive, scan_state *st);
// Takes the restart marker that ends an interval; 0 where it is not the one expected.
EIGHTH_INTERNAL int eighth_restart(scan_state *st, int *next);
EIGHTH_INTERNAL int eighth_read_to_end(reader *r, eighth *e, scan *s, tables *t, int progressive, int one_scan, const int *fatal_warning);

// eighth_split.c: a one-scan image on two threads.
EIGHTH_INTERNAL int eighth_split_decode(eighth *e, const reader *r, const scan *s, const tables *t, const eighth_more *more,
                                        const int *fatal_warning);
// The MCU at which a scan with restart markers is cut in two: a restart at the start of an MCU
// row, nearest the middle; 0 where there is none worth a thread.
EIGHTH_INTERNAL uint64_t eighth_restart_boundary(uint32_t mcus_wide, uint32_t mcus_high, unsigned restart_interval);
EIGHTH_INTERNAL int eighth_in_step(scan_state *st, uint64_t at, int phase);
EIGHTH_INTERNAL void eighth_watch_guesses(scan_state *st, const reader *r);
EIGHTH_INTERNAL int eighth_take_until(eighth *e, uint64_t limit);
EIGHTH_INTERNAL void eighth_end_pending(eighth *e);

// eighth_pixels.c: pixels from the coefficients kept.
EIGHTH_INTERNAL extern uint8_t eighth_idct_limit[1024];
EIGHTH_INTERNAL void eighth_make_tables(void);
EIGHTH_INTERNAL void eighth_make_samples_rows(eighth *e, uint64_t from, uint64_t to);
EIGHTH_INTERNAL void eighth_compose(const eighth *e, uint32_t y, uint8_t *row);
static inline void eighth_make_samples(eighth *e) { eighth_make_samples_rows(e, 0, UINT32_MAX); }


// The bit buffer in locals while a scan is decoded (written back around the rare calls that need
// the reader), so that the compiler keeps it in registers.
#define LOAD_BITS() (buffer = r->buffer, bits = r->bits)
#define SAVE_BITS() (r->buffer = buffer, r->bits = bits)
#define FILL_BITS()                                                                                                    \
    do {                                                                                                               \
        if (bits < 32) {                                                                                               \
            SAVE_BITS();                                                                                               \
            eighth_fill_bits(r);                                                                                              \
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

static inline int square_part_of(const int16_t *coef, const int16_t *quant, square_part *part) {
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
static inline int square_finish(int16_t dc, int16_t quant, const square_part *part, uint8_t *out, size_t stride) {
    int32_t z0 = (int32_t)dc * quant;
    unsigned outside = OUTSIDE16(z0);
    for (int i = 0; i < 2; i++) {
        int32_t w0 = z0 * 4 + (i ? part->bottom : part->top);
        int64_t even = (int64_t)w0 * 32768;
        int64_t left = (even + part->odd[i] + (1 << 19)) >> 20, right = (even - part->odd[i] + (1 << 19)) >> 20;
        outside |= OUTSIDE16(w0) | ((uint64_t)(left + 512) > 1023u) | ((uint64_t)(right + 512) > 1023u);
        out[(size_t)i * stride] = eighth_idct_limit[left & 1023];
        out[(size_t)i * stride + 1] = eighth_idct_limit[right & 1023];
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

static inline int mcu_layout(const scan_state *st, mcu_block blocks[10]) {
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

// A block's DC difference into `diff` (the bit buffer in locals, as in eighth_decode_sequential).
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

// Data of less is decoded on one thread (a thread's start is not worth it); an image of more
// blocks is streamed as it would be on one, whose memory does not grow with it. A run that has
// decoded this many blocks past the next one's start without falling into step with it ends.
enum { SPLIT_MIN_BYTES = 1 << 17, SPLIT_MAX_BYTES = 1 << 28, SPLIT_MAX_BLOCKS = 1 << 21, MAX_RUNS = 8, RUN_SLACK = 1 << 12 };

#endif
