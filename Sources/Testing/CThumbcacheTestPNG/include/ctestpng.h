#ifndef CTESTPNG_H
#define CTESTPNG_H
// PNGs of every kind, written by libpng, for the tests of thumbcache's own PNG reader.
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t width, height;
    int color_type;          // 0, 2, 3, 4 or 6
    int bit_depth;           // 1, 2, 4, 8 or 16
    int interlaced;          // Adam7 when 1
    int filter;              // 0–4: every row with that filter; -1: libpng picks per row
    size_t idat_size;        // the largest IDAT chunk (0: libpng's default, 8 KB)
    const uint8_t *palette;  // palette_count RGB triples, for color type 3
    int palette_count;
    const uint8_t *trns;     // palette alphas (color type 3), trns_count of them
    int trns_count;
    const uint16_t *key;     // a tRNS colour key: 1 sample for gray, 3 for RGB; or NULL
} ctestpng_format;

/// Encodes `samples` (rows as PNG stores them: packed below 8 bits, 16-bit samples big-endian,
/// `stride` bytes apart) into a new malloc'd PNG; 0 on success, with *out and *length set.
int ctestpng_encode(const uint8_t *samples, size_t stride, const ctestpng_format *format, uint8_t **out, size_t *length);

void ctestpng_free(void *pointer);

#endif
