// Pixels at 1/8 from the DC coefficients kept: libjpeg-turbo's range limit and YCbCr to RGB, with its
// integers (eighth_internal.h says where the rest is).
#include "eighth_internal.h"

// The post-IDCT range limit of jdmaster.c (prepare_range_limit_table), indexed by value & 1023.
uint8_t eighth_idct_limit[1024];

static void make_limits(void) {
    for (int i = 0; i < 1024; i++)
        eighth_idct_limit[i] = (uint8_t)(i < 128 ? i + 128 : i < 512 ? 255 : i < 896 ? 0 : i - 896);
}

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

void eighth_make_tables(void) {
    make_limits();
    make_color();
}

// Each component's pixels, from the DC coefficients of its planes.
// Each component's pixels of MCU rows [from, to) of its planes, from their DC coefficients.
void eighth_make_samples_rows(eighth *e, uint64_t from, uint64_t to) {
    for (int ci = 0; ci < e->count; ci++) {
        component *c = &e->c[ci];
        if (c->square) continue;  // made as its blocks were walked
        int q = c->quant[0];
        uint64_t v = e->count == 1 ? 1 : (uint64_t)c->v, last = to * v < c->plane_high ? to * v : c->plane_high;
        for (size_t i = (size_t)(from * v) * c->plane_wide; i < (size_t)last * c->plane_wide; i++) {
            int value = c->dc[i] * q;
            c->samples[i] = eighth_idct_limit[((value + 4) >> 3) & 1023];
        }
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
void eighth_compose(const eighth *e, uint32_t y, uint8_t *row) {
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
