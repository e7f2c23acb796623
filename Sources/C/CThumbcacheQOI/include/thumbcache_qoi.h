#ifndef THUMBCACHE_QOI_H
#define THUMBCACHE_QOI_H
// thumbcache's shim over Debian's qoi.h (libqoi-dev, the format's reference implementation,
// compiled here once): the header read without decoding, and a whole-image decode to RGBA.
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t width;
    uint32_t height;
    int channels;    // 3 (RGB) or 4 (RGBA), as the header states
    int colorspace;  // 0 sRGB with linear alpha, 1 all channels linear
} tcqoi_info;

/// Reads and checks the 14-byte header of `size` bytes at `data`: 0 on success, -1 if it is not
/// QOI, -2 if it is too short to hold a header and the end marker.
int tcqoi_header(const void *data, size_t size, tcqoi_info *info);

/// True if the file ends with QOI's end marker (seven zero bytes and a one): a file cut short
/// does not, and qoi.h would repeat its last pixel to the end rather than say so.
int tcqoi_has_end_marker(const void *data, size_t size);

/// Decodes the whole image as RGBA8 rows, top to bottom; NULL if it is corrupt or too large for
/// qoi.h. Free the result with tcqoi_free.
uint8_t *tcqoi_decode_rgba(const void *data, size_t size);

/// Encodes `width` × `height` RGBA8 pixels (tests make their fixtures with the same library);
/// the length in `*length`. Free the result with tcqoi_free.
uint8_t *tcqoi_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, int channels, size_t *length);

void tcqoi_free(void *pointer);

#endif
